/**
 * Authentication at the HTTP layer (security.mdx, `universal/security.yaml`): a call to a protected task
 * without credentials, or with a rejected credential, is answered `401` with
 * `WWW-Authenticate: Bearer realm="<endpoint>"` before any task code runs; a caller without the permission
 * gets `403` with `INSUFFICIENT_PERMISSIONS`. Public tasks, `tools/list`, `initialize` and the agent card are
 * never gated here.
 */
import { authorize } from './auth.js'
import { AgentError } from './errors.js'
import type { AnyTask, Principal } from './types.js'
import { isRecord } from '@adwire/schemas/json'
import { adcpRpcErrorResponse } from './rpc-answer.js'

/** A2A methods that invoke a skill (1.0 and 0.3 names). */
const A2A_SEND = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream'])

/** The JSON-RPC messages of a body (one, or a batch). */
function messages(body: unknown): Record<string, unknown>[] {
  if (Array.isArray(body)) return body.filter(isRecord)
  return isRecord(body) ? [body] : []
}

/** The AdCP task a JSON-RPC message invokes: MCP `tools/call` name or A2A DataPart `skill`. */
export function invokedTask(message: Record<string, unknown>, transport: 'mcp' | 'a2a'): string | undefined {
  const params = message.params
  if (!isRecord(params)) return undefined
  if (transport === 'mcp')
    return message.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined
  if (typeof message.method !== 'string' || !A2A_SEND.has(message.method) || !isRecord(params.message))
    return undefined
  const parts = params.message.parts
  if (!Array.isArray(parts)) return undefined
  for (const part of parts)
    if (isRecord(part) && isRecord(part.data) && typeof part.data.skill === 'string') return part.data.skill
  return undefined
}

/** JSON-RPC error codes of AdCP's pre-dispatch transport errors (transport-errors.mdx). */
const RPC_CODES: Record<string, number> = {
  AUTH_MISSING: -32028,
  AUTH_INVALID: -32028,
  INSUFFICIENT_PERMISSIONS: -32028,
}

export interface HttpAuthGateOptions {
  readonly tasks: readonly AnyTask[]
  readonly authenticate: (authorization: string | null | undefined) => Promise<Principal | undefined>
  /** The agent's public base URL; the realm is the endpoint URL (`{url}/mcp` or `{url}/a2a`). */
  readonly url: string
  /** RFC 9728 protected-resource metadata URL, sent as `resource_metadata` when the agent serves one. */
  readonly resourceMetadataUrl?: string
  /** A rejected bearer on a public task is a 401 too (see AuthOptions.refuseInvalidOnPublicTasks). */
  readonly refuseInvalidOnPublicTasks?: boolean
}

/**
 * Builds the gate: `undefined` lets the request through, else the 401/403 response to send.
 *
 * @example
 * const gate = createHttpAuthGate({ tasks, authenticate, url: 'https://agent.example' })
 * const refused = await gate(request, 'mcp')
 * if (refused) return refused
 */
export function createHttpAuthGate(
  options: HttpAuthGateOptions,
): (request: Request, transport: 'mcp' | 'a2a') => Promise<Response | undefined> {
  const byName = new Map(options.tasks.map((task) => [task.name, task]))
  const base = options.url.replace(/\/$/, '')
  return async (request, transport) => {
    if (request.method !== 'POST') return undefined
    let body: unknown
    try {
      body = await request.clone().json()
    } catch {
      return undefined // the transport answers the parse error itself
    }
    const calls = messages(body)
      .map((message) => ({ message, task: byName.get(invokedTask(message, transport) ?? '') }))
      .filter((call): call is { message: Record<string, unknown>; task: AnyTask } => Boolean(call.task))
    const protectedCalls = calls.filter((call) => call.task.access !== 'public')
    const authorization = request.headers.get('authorization')
    const checkPublic = options.refuseInvalidOnPublicTasks === true && Boolean(authorization)
    if (protectedCalls.length === 0 && !(checkPublic && calls.length > 0)) return undefined
    const first = protectedCalls[0] ?? calls[0]!
    const id = first.message.id ?? null
    const realm = `${base}/${transport}`
    let principal: Principal | undefined
    try {
      principal = await options.authenticate(authorization)
    } catch {
      return refusal(401, id, new AgentError('AUTH_INVALID', 'the credentials were rejected'), {
        realm,
        error: 'invalid_token',
        ...options,
      })
    }
    if (protectedCalls.length === 0) return undefined
    if (!principal)
      return refusal(
        401,
        id,
        new AgentError('AUTH_MISSING', `${first.task.name} requires credentials (Authorization: Bearer)`),
        { realm, ...options },
      )
    for (const call of protectedCalls) {
      try {
        authorize(call.task.access, principal, call.task.name)
      } catch (error) {
        if (AgentError.is(error)) return refusal(403, call.message.id ?? null, error, { realm, ...options })
        throw error
      }
    }
    return undefined
  }
}

function challenge(realm: string, error: string | undefined, resourceMetadataUrl: string | undefined) {
  return [
    `Bearer realm="${realm}"`,
    ...(error ? [`error="${error}"`] : []),
    ...(resourceMetadataUrl ? [`resource_metadata="${resourceMetadataUrl}"`] : []),
  ].join(', ')
}

function refusal(
  status: 401 | 403,
  id: unknown,
  error: AgentError,
  at: { realm: string; error?: string; resourceMetadataUrl?: string },
): Response {
  const headers: Record<string, string> = {}
  if (status === 401) headers['www-authenticate'] = challenge(at.realm, at.error, at.resourceMetadataUrl)
  return adcpRpcErrorResponse(id, RPC_CODES[error.code] ?? -32028, error.toAdcpError(), { status, headers })
}
