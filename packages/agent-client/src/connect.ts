/** Connecting to an agent over MCP or A2A from its base URL or its endpoint URL. */
import { connectA2a } from './a2a.js'
import type { AgentConnection } from './connection.js'
import { agentEndpoint, type Protocol } from './endpoint.js'
import { AgentClientError } from './errors.js'
import { boundedFetch } from './limits.js'
import { connectMcp } from './mcp.js'

/** Options of {@link connectAgent}. */
export interface ConnectOptions {
  /** The transport. Default: the one the URL names (`…/mcp`, `…/a2a`, `…/agent-card.json`), else `mcp`. */
  readonly protocol?: Protocol
  /**
   * The fetch every byte goes through (a caller reaching untrusted agents passes one that refuses private
   * addresses and redirects, such as `createPinnedFetch` of `@adwire/http-signatures/node`). Default: the
   * global `fetch`.
   */
  readonly fetch?: typeof fetch
  /** Headers sent with every request, such as `authorization`. */
  readonly headers?: Readonly<Record<string, string>>
  /** Largest response body, bytes. Default: no cap (the given fetch may have its own). */
  readonly maxResponseBytes?: number
  /** How long connecting may take (MCP initialize, A2A card), ms. Default 30 000. */
  readonly connectTimeoutMs?: number
  /** How long one task call may take, ms, unless the call says. Default 30 000. */
  readonly timeoutMs?: number
  /** Aborts connecting. */
  readonly signal?: AbortSignal
  /** The MCP `clientInfo`. Default `{ name: 'adwire-agent-client', version: '0.1.0' }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string }
}

/** Throws `INVALID_REQUEST` unless `url` is an absolute http(s) URL. */
export function assertAgentUrl(url: string): void {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new AgentClientError(
      'INVALID_REQUEST',
      `the agent URL must be an absolute http(s) URL, not "${url}"`,
    )
  }
}

/**
 * Connects to the agent at `url`, its base URL or its endpoint URL: over MCP at `<base>/mcp` (or the `…/mcp`
 * URL as given), over A2A from the agent card at `<base>/.well-known/agent-card.json` (then at the URL as
 * given, when it named an endpoint the card is not above).
 *
 * @throws {AgentClientError} `INVALID_REQUEST` for a URL that is not absolute http(s); `SERVICE_UNAVAILABLE`
 *   when connecting timed out or was aborted; the transport's own error when the agent could not be reached.
 * @example
 * const agent = await connectAgent('https://seller.example/mcp', { fetch: pinnedFetch, maxResponseBytes: 1 << 22 })
 * const { body } = await agent.call('get_products', { brief: 'outdoor' })
 * await agent.close()
 */
export async function connectAgent(url: string, options: ConnectOptions = {}): Promise<AgentConnection> {
  assertAgentUrl(url)
  const endpoint = agentEndpoint(url)
  const protocol = options.protocol ?? endpoint.protocol ?? 'mcp'
  const transport = {
    fetch: boundedFetch(options.fetch ?? ((input, init) => fetch(input, init)), {
      maxResponseBytes: options.maxResponseBytes,
      headers: options.headers,
    }),
    timeoutMs: options.timeoutMs ?? 30_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
    clientInfo: options.clientInfo ?? { name: 'adwire-agent-client', version: '0.1.0' },
    ...(options.signal ? { signal: options.signal } : {}),
  }
  if (protocol === 'mcp') return connectMcp(endpoint.mcp, transport)
  const given = url.trim().replace(/\/+$/, '')
  const cards = endpoint.protocol === 'a2a' && /\/a2a$/.test(given) ? [endpoint.base, given] : [endpoint.base]
  return connectA2a(cards, transport)
}
