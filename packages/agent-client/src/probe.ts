/** Is an agent up: an MCP `initialize` with the official client, timed. */
import { connectAgent } from './connect.js'

/** Options of {@link probeAgent}. */
export interface ProbeOptions {
  /** The fetch to use (the SSRF-safe pinned fetch for untrusted agents). Default: the global `fetch`. */
  readonly fetch?: typeof fetch
  /** How long the probe may take, ms. Default 10 000. */
  readonly timeoutMs?: number
  /** The `user-agent` header and MCP client name. Default `adwire-agent-client`. */
  readonly userAgent?: string
}

/** What {@link probeAgent} saw. */
export interface ProbeResult {
  /** Any HTTP answer below 500 means the agent is up. */
  readonly online: boolean
  /** The agent answered 401 (it wants OAuth credentials). */
  readonly oauthRequired: boolean
  /** The HTTP status of the `initialize` exchange, when one arrived. */
  readonly status?: number
  /** How long the probe took, ms. */
  readonly ms: number
  /** Why no HTTP answer arrived, when none did. */
  readonly error?: string
}

/**
 * Probes the MCP agent at `url` (base or `…/mcp` endpoint URL) with the official client's `initialize`; never
 * throws.
 *
 * @example
 * const { online, status, ms } = await probeAgent('https://seller.example/mcp', { fetch: pinnedFetch, timeoutMs: 5_000 })
 */
export async function probeAgent(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const started = performance.now()
  const userAgent = options.userAgent ?? 'adwire-agent-client'
  const base = options.fetch ?? ((input, init) => fetch(input, init))
  let status: number | undefined
  const observing: typeof fetch = async (input, init) => {
    const response = await base(input, init)
    status ??= response.status
    return response
  }
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const agent = await connectAgent(url, {
      protocol: 'mcp',
      fetch: observing,
      headers: { 'user-agent': userAgent },
      connectTimeoutMs: options.timeoutMs ?? 10_000,
      clientInfo: { name: userAgent, version: '1' },
    })
    await agent.close().catch(() => {})
    const ms = elapsed()
    return { online: true, oauthRequired: false, ...(status !== undefined ? { status } : {}), ms }
  } catch (error) {
    const ms = elapsed()
    if (status !== undefined) return { online: status < 500, oauthRequired: status === 401, status, ms }
    return {
      online: false,
      oauthRequired: false,
      ms,
      error: error instanceof Error ? error.message : String(error),
    }
  }
}
