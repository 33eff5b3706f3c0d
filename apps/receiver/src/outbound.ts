/**
 * Every request the receiver makes goes through the pinned fetch of `@adwire/http-signatures/node`: the host is
 * resolved once, each answer is checked, and the socket connects to the checked address (a second DNS answer
 * cannot move it). Sellers' URLs (keys, capabilities) are https and public unless ALLOW_INSECURE_KEY_URLS;
 * the downstream URL is the operator's own, so any address but cloud metadata ones is allowed.
 */
import type { SafeFetch } from '@adwire/http-signatures'
import { createPinnedFetch, createSafeFetch, type TargetPolicy } from '@adwire/http-signatures/node'

/** Options of {@link outboundFetches}. */
export interface OutboundOptions {
  /** Development only: sellers' URLs may be http and resolve to loopback or private addresses. */
  readonly allowInsecure: boolean
  /** Resolves host names (default `node:dns`); the tests inject a rebinding resolver. */
  readonly lookup?: TargetPolicy['lookup']
  /** Whole-call cap of a capabilities call, ms. Default 10000 (the spec's budget). */
  readonly agentTimeoutMs?: number
}

/** The receiver's three outbound fetches. */
export interface OutboundFetches {
  /** Sellers' JWKS and brand.json (GET, size-capped). */
  readonly keyFetch: SafeFetch
  /** Sellers' agents (`get_adcp_capabilities` over MCP or A2A). */
  readonly agentFetch: typeof fetch
  /** The downstream forwarder. */
  readonly forwardFetch: typeof fetch
}

/**
 * @example
 * const { agentFetch } = outboundFetches({ allowInsecure: false })
 * await getAgentCapabilities('https://ads.seller.example/mcp', { fetch: agentFetch })
 */
export function outboundFetches(options: OutboundOptions): OutboundFetches {
  const lookup = options.lookup ? { lookup: options.lookup } : {}
  const sellers = {
    allowHttp: options.allowInsecure,
    allowLoopback: options.allowInsecure,
    allowPrivate: options.allowInsecure,
    ...lookup,
  }
  return {
    keyFetch: createSafeFetch({ ...sellers, userAgent: 'adwire-receiver' }),
    agentFetch: createPinnedFetch({
      ...sellers,
      timeoutMs: options.agentTimeoutMs ?? 10_000,
      maxBytes: 1_048_576,
      userAgent: 'adwire-receiver',
    }),
    forwardFetch: createPinnedFetch({
      allowHttp: true,
      allowLoopback: true,
      allowPrivate: true,
      timeoutMs: 60_000,
      userAgent: 'adwire-receiver',
      ...lookup,
    }),
  }
}
