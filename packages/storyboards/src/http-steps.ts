/**
 * Runner-side tasks that are plain HTTP reads of what the agent publishes: `protected_resource_metadata`
 * (RFC 9728 §3), `oauth_auth_server_metadata` (RFC 8414 §3), `fetch_brand_jwks` (brand.json `agents[].jwks_uri`)
 * and `assert_jwks_purpose` (a webhook-valid signing key, security.mdx), graded like any step.
 */
import { createRunnerFetch } from './http.js'
import type { StepResult, ValidationResult } from './result.js'
import type { RunContext } from './run-context.js'
import type { TaskResponse } from './caller.js'
import type { Step, Validation } from './types.js'
import { isRecord } from '@adwire/schemas/json'

/** The runner tasks this module runs. */
export const HTTP_TASKS: ReadonlySet<string> = new Set([
  'protected_resource_metadata',
  'oauth_auth_server_metadata',
  'fetch_brand_jwks',
  'assert_jwks_purpose',
])

type Partial = Omit<StepResult, 'phase_id' | 'step_id' | 'duration_ms'>

async function get(run: RunContext, url: string): Promise<TaskResponse> {
  const http = createRunnerFetch({
    ...run.env.callerOptions,
    credentials: { type: 'none' },
    agentUrl: run.env.connectUrl,
  })
  try {
    const response = await http.fetch(url, { signal: AbortSignal.timeout(run.env.stepTimeoutMs) })
    const text = await response.text()
    let body: Record<string, unknown> | undefined
    try {
      const parsed: unknown = JSON.parse(text)
      body = isRecord(parsed) ? parsed : undefined
    } catch {
      body = undefined
    }
    return {
      transport: run.env.protocol,
      body,
      transportError: !response.ok,
      http: { status: response.status, headers: Object.fromEntries(response.headers) },
      raw: url,
    }
  } catch (error) {
    return {
      transport: run.env.protocol,
      body: undefined,
      transportError: true,
      error: `GET ${url}: ${(error as Error).message}`,
      raw: url,
    }
  }
}

const fail = (check: string, description: string, detail: string): ValidationResult => ({
  check,
  description,
  passed: false,
  severity: 'required',
  detail,
})

function previous(run: RunContext, task: string): Record<string, unknown> | undefined {
  const found = [...run.scope.responses.entries()].reverse().find(([id]) => run.tasks.get(id) === task)
  return isRecord(found?.[1]) ? found[1] : undefined
}

async function brandJwks(run: RunContext): Promise<{ response: TaskResponse; problem?: string }> {
  const origin = new URL(run.env.agentUrl).origin
  const brand = await get(run, `${origin}/.well-known/brand.json`)
  if (!brand.body)
    return { response: brand, problem: brand.http ? 'brand_json_malformed' : 'brand_json_unreachable' }
  const agents = Array.isArray(brand.body.agents) ? brand.body.agents.filter(isRecord) : []
  const agent =
    agents.find(
      (entry) => typeof entry.jwks_uri === 'string' && String(entry.url ?? '').startsWith(origin),
    ) ?? agents.find((entry) => typeof entry.jwks_uri === 'string')
  if (!agent) return { response: brand, problem: 'agents_jwks_uri_missing' }
  const jwks = await get(run, String(agent.jwks_uri))
  return Array.isArray(jwks.body?.keys)
    ? { response: jwks }
    : { response: jwks, problem: 'agents_jwks_uri_missing' }
}

/**
 * Runs one runner-side HTTP task and grades the step's validations on what it read.
 * @example await runHttpStep(step, 'protected_resource_metadata', run)
 */
export async function runHttpStep(
  step: Step,
  task: string,
  run: RunContext,
  grade: (validations: Validation[], response: TaskResponse) => Promise<ValidationResult[]>,
): Promise<Partial> {
  let response: TaskResponse
  const extra: ValidationResult[] = []
  if (task === 'protected_resource_metadata') {
    const url = new URL(run.env.agentUrl)
    const path =
      run.env.protocol === 'mcp'
        ? `${url.pathname.replace(/\/+$/, '')}/mcp`
        : url.pathname.replace(/\/+$/, '')
    response = await get(run, `${url.origin}/.well-known/oauth-protected-resource${path}`)
  } else if (task === 'oauth_auth_server_metadata') {
    const servers = previous(run, 'protected_resource_metadata')?.authorization_servers
    const issuer = Array.isArray(servers) && typeof servers[0] === 'string' ? servers[0] : undefined
    if (!issuer) {
      return {
        task,
        status: 'skipped',
        skip: {
          reason: 'prerequisite_failed',
          detail: 'no authorization_servers[0] from protected_resource_metadata',
        },
        validations: [],
      }
    }
    response = await get(run, `${issuer.replace(/\/+$/, '')}/.well-known/oauth-authorization-server`)
  } else if (task === 'fetch_brand_jwks') {
    const read = await brandJwks(run)
    response = read.response
    if (read.problem)
      extra.push(
        fail(
          read.problem,
          'brand.json names a jwks_uri that serves a JWKS',
          `${read.problem}: ${response.error ?? `HTTP ${response.http?.status ?? '?'}`}`,
        ),
      )
  } else {
    const jwks = previous(run, 'fetch_brand_jwks') ?? (await brandJwks(run)).response.body
    const keys = (Array.isArray(jwks?.keys) ? jwks.keys : []).filter(isRecord)
    const signing = keys.filter(
      (key) => key.adcp_use === 'request-signing' || key.adcp_use === 'webhook-signing',
    )
    const live = signing.filter((key) => key.revoked !== true && !key.revoked_at)
    const problem =
      keys.length === 0
        ? 'webhook_signing_keys_unpublished'
        : signing.length === 0
          ? 'webhook_signing_keys_wrong_purpose'
          : live.length === 0
            ? 'webhook_signing_keys_all_revoked'
            : undefined
    response = { transport: run.env.protocol, body: jwks, transportError: false, raw: undefined }
    if (problem)
      extra.push(
        fail(
          problem,
          'the JWKS carries a webhook-valid signing key that is not revoked',
          `${problem}: ${keys.length} key(s), adcp_use ${JSON.stringify(keys.map((key) => key.adcp_use))}`,
        ),
      )
  }
  if (response.error && !response.http)
    return {
      task,
      status: 'failed',
      validations: extra,
      error: response.error,
      request: null,
      response: null,
    }
  const validations = [...(await grade(step.validations ?? [], response)), ...extra]
  const failed = validations.some((v) => !v.passed && v.severity === 'required')
  if (!failed && response.body) run.scope.responses.set(step.id, response.body)
  return {
    task,
    status: failed ? 'failed' : 'passed',
    validations,
    request: { method: 'GET', url: response.raw },
    response: response.body ?? null,
    ...(response.http ? { http_status: response.http.status } : {}),
  }
}
