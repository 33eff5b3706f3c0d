/**
 * The sales agent's HTTP surface: the agent host of @adwire/agent-server that `openSeller` built (MCP at /mcp,
 * A2A at /a2a and the agent cards, the operator's brand.json and the webhook-signing JWKS under /.well-known,
 * /health, request bodies capped before the task server, the `{ adcp_error }` body for unknown routes and
 * failures), with the sales agent in brand.json.
 */
import type { AgentHttp } from '@adwire/agent-server/host'
import type { SalesAgentDeps } from './deps.js'

/** The sales agent in brand.json (`agents[]` for its base URL, /mcp and /a2a, all on one JWKS). */
export const BRAND = {
  type: 'sales',
  id: 'adwire_sales_agent',
  description: 'adwire sales agent (AdCP 3.1): products, media buys, delivery',
  name: 'the sales agent',
} as const

/**
 * @example
 * const runtime = await openDeps(env, 'http://127.0.0.1:4500')
 * listen({ port: 4500, fetch: createApp(runtime.deps).fetch })
 */
export function createApp(deps: SalesAgentDeps): AgentHttp {
  return deps.http
}
