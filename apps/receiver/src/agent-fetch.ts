/**
 * The fetch the receiver calls sellers' agents with (`get_adcp_capabilities` when a registration discovers its
 * keys through the agent's capabilities): https only, every address the host name resolves to must be public,
 * no redirects, and a time cap. ALLOW_INSECURE_KEY_URLS relaxes it to http and loopback or private addresses
 * for local development; cloud metadata and other never-routable addresses stay refused.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { checkAddress } from '@adwire/http-signatures'

/** Options of {@link createAgentFetch}. */
export interface AgentFetchOptions {
  /** Development only: http and loopback or private addresses. */
  readonly allowInsecure: boolean
  /** Whole-call cap, milliseconds. Default 10000 (the spec's budget for the capabilities call). */
  readonly timeoutMs?: number
}

/**
 * A `fetch` that refuses unsafe destinations before connecting (the host's DNS answers are checked, so a
 * name that points inside the network is refused too) and never follows a redirect.
 *
 * @example
 * const agentFetch = createAgentFetch({ allowInsecure: false })
 * await getAgentCapabilities('https://ads.seller.example/mcp', { fetch: agentFetch })
 */
export function createAgentFetch(options: AgentFetchOptions): typeof fetch {
  const policy = { allowLoopback: options.allowInsecure, allowPrivate: options.allowInsecure }
  const timeoutMs = options.timeoutMs ?? 10_000
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) {
      throw new TypeError(`refused ${url.origin}: ${options.allowInsecure ? 'http(s)' : 'https'} only`)
    }
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true })).map((answer) => answer.address)
    for (const address of addresses) checkAddress(address, policy)
    const signals = [AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])]
    return fetch(input, { ...init, redirect: 'error', signal: AbortSignal.any(signals) })
  }
}
