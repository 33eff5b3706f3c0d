/**
 * What the Agent Compliance routes share: the agent path prefix, the configured services (500 when absent), the
 * agent URL parameter, the optional body, the public links of an agent and the mapping of credential-store
 * failures to HTTP.
 */
import type { Context } from 'hono'
import { CredentialsUnavailableError, type AgentCredentialStore } from '../compliance/credentials.js'
import type { BadgeRole } from '../compliance/status-catalog.js'
import type { ComplianceStatusService } from '../compliance/status.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, HttpError, readBody } from './http.js'

/** The path of one agent; `:encodedUrl` is its URL, percent-encoded. */
export const AGENT_BASE = '/api/registry/agents/:encodedUrl'

/**
 * The compliance status service, or 500 `compliance_unavailable`.
 *
 * @example
 * const { settings, derived } = await serviceOf(deps).read(agentUrl)
 */
export function serviceOf(deps: RegistryDeps): ComplianceStatusService {
  const service = deps.compliance?.outcomes
  if (!service) throw new HttpError(500, 'compliance_unavailable', 'compliance status is not configured')
  return service
}

/**
 * The agent credential store, or 500 `credentials_unavailable` when no sealing key is configured.
 *
 * @example
 * const status = await credentialsOf(deps).status(orgId, agentUrl)
 */
export function credentialsOf(deps: RegistryDeps): AgentCredentialStore {
  const store = deps.compliance?.credentials
  if (!store?.available) {
    throw new HttpError(
      500,
      'credentials_unavailable',
      'agent credentials cannot be stored: the registry has no AGENT_CREDENTIALS_KEY',
    )
  }
  return store
}

/**
 * The agent URL of the request path (400 `invalid_agent_url` when it is not one).
 *
 * @example
 * app.get(`${AGENT_BASE}/compliance`, (c) => c.json({ agent_url: agentOf(c) }))
 */
export const agentOf = (c: Context): string => agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')

/**
 * A body the document declares optional: `{}` when none was sent.
 *
 * @example
 * const body = await optionalBody<{ organization_id: string }>(c, 'refreshAgent')
 */
export async function optionalBody<T>(c: Context, operationId: string): Promise<Partial<T>> {
  const length = c.req.header('content-length')
  if (!c.req.header('content-type') && (length === undefined || length === '0')) return {}
  return readBody<Partial<T>>(c, operationId)
}

/** The public links of an agent: its compliance page and its badges. */
export interface AgentLinks {
  readonly registry: string
  badge(role: BadgeRole, version?: string): string
}

/**
 * The links of `agentUrl` under this registry's public URL.
 *
 * @example
 * agentLinks(deps, c, 'https://agent.example/mcp').badge('sales') // '…/api/registry/agents/https%3A…/badge/sales.svg'
 */
export function agentLinks(deps: RegistryDeps, c: Context, agentUrl: string): AgentLinks {
  const base = `${deps.publicUrl(c)}/api/registry/agents/${encodeURIComponent(agentUrl)}`
  return {
    registry: `${base}/compliance`,
    badge: (role, version) =>
      version ? `${base}/badge/${role}/${version}.svg` : `${base}/badge/${role}.svg`,
  }
}

/**
 * Runs a sealing or opening step, answering a missing or wrong key as 500 `credentials_unavailable`.
 *
 * @example
 * const saved = await sealing(() => store.saveToken(orgId, agentUrl, token, now))
 */
export async function sealing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof CredentialsUnavailableError) {
      throw new HttpError(500, 'credentials_unavailable', error.message)
    }
    throw error
  }
}
