import { SignatureError } from '../errors.js'
import type { AdcpJwk, KeyResolver } from '../types.js'
import { DocumentCache, findWithRefetch } from './document-cache.js'
import { defaultSafeFetch, type SafeFetch } from './fetch-types.js'
import { indexJwks, readStrictJson } from './json-document.js'
import { discoveryError, forProfile } from './profile-errors.js'

/** Options of {@link remoteJwksResolver}. Durations in seconds. */
export interface RemoteJwksResolverOptions {
  /** The JWKS URL (an `agents[].jwks_uri`). */
  readonly url: string
  /** The fetch to use. Default: the SSRF-safe {@link createSafeFetch} with its defaults. */
  readonly fetch?: SafeFetch
  /** Clock for cache bookkeeping, Unix seconds. Default: the verifier's `now` from the resolve context. */
  readonly now?: () => number
  /** How long a fetched JWKS is used. Default 300; at most 1800 (it must not outlive a revocation poll). */
  readonly cacheSeconds?: number
  /** Minimum time between kid-miss refetches (the first is immediate). Default 30. */
  readonly refetchCooldownSeconds?: number
  /** After a failed fetch, no new fetch for this long. Default 30. */
  readonly negativeCacheSeconds?: number
  /** How long past `cacheSeconds` an old JWKS still answers while fetches fail. Default 300. */
  readonly staleIfErrorSeconds?: number
  /** Size cap of the JWKS. Default 65536 (security.mdx `MAX_JWKS_BYTES`). */
  readonly maxBytes?: number
  /** The signer the keys speak for (the `agents[].url` whose `jwks_uri` this is), reported with each key. */
  readonly signer?: string
}

/** Longest JWKS cache AdCP allows: the revocation poll ceiling (security.mdx: cache TTL ≤ poll interval). */
export const MAX_JWKS_CACHE_SECONDS = 1800

/**
 * A {@link KeyResolver} over a remote JWKS (AdCP 3.1 security.mdx, webhook callbacks steps 3 and 4; request
 * checklist step 7). The set is cached for `cacheSeconds`; an unknown keyid triggers one refetch, then no
 * other within `refetchCooldownSeconds` of it (the first is never delayed), then resolves to `undefined`
 * (`*_key_unknown`); concurrent misses share one fetch. The body must be strict JSON (no repeated member
 * names), within `maxBytes`, with unique kids.
 *
 * Failures, when no usable cached set answers: request profile `request_signature_jwks_unavailable`
 * (retryable) or `request_signature_jwks_untrusted` (the fetch broke the SSRF rules); webhook profile
 * `key_source_unavailable` (the webhook taxonomy has no such code and every `webhook_*` code is terminal for
 * the sender, so a receiver answers 503 and the seller retries). A kid miss while the cached set is expired
 * and its refresh failing also throws (the key may exist) rather than answering unknown.
 *
 * @example
 * const keys = remoteJwksResolver({ url: 'https://seller.example/.well-known/jwks.json', signer: 'https://seller.example/mcp' })
 * const found = await keys.resolve('seller-2026-01', { profile: 'webhook', now: Math.floor(Date.now() / 1000) })
 */
export function remoteJwksResolver(options: RemoteJwksResolverOptions): KeyResolver {
  const cacheSeconds = options.cacheSeconds ?? 300
  if (!(cacheSeconds > 0 && cacheSeconds <= MAX_JWKS_CACHE_SECONDS)) {
    throw new SignatureError('key_source_invalid', `cacheSeconds must be in (0, ${MAX_JWKS_CACHE_SECONDS}]`)
  }
  if (!URL.canParse(options.url))
    throw new SignatureError('key_source_invalid', 'the JWKS url must be an absolute URL')
  const fetch = options.fetch ?? defaultSafeFetch()
  const maxBytes = options.maxBytes ?? 65_536
  const cache = new DocumentCache<ReadonlyMap<string, AdcpJwk>>({
    ttlSeconds: cacheSeconds,
    negativeCacheSeconds: options.negativeCacheSeconds ?? 30,
    staleIfErrorSeconds: options.staleIfErrorSeconds ?? 300,
    refetchCooldownSeconds: options.refetchCooldownSeconds ?? 30,
    load: async (forced) => ({ value: await loadJwks(fetch, options.url, maxBytes, forced) }),
  })
  const signer = options.signer
  return {
    resolve: async (keyid, context) => {
      const now = options.now?.() ?? context.now
      let jwk: AdcpJwk | undefined
      try {
        jwk = await findWithRefetch(cache, now, (keys) => keys.get(keyid))
      } catch (error) {
        throw forProfile(error, context.profile)
      }
      if (jwk === undefined) return undefined
      return signer === undefined ? { jwk } : { jwk, signer }
    },
  }
}

/**
 * Fetches and indexes one JWKS. Any status but 200, a refused or failed fetch, or a malformed set throws the
 * request-profile discovery code (`request_signature_jwks_unavailable` / `_untrusted`).
 */
async function loadJwks(
  fetch: SafeFetch,
  url: string,
  maxBytes: number,
  forced: boolean,
): Promise<ReadonlyMap<string, AdcpJwk>> {
  const where = `JWKS ${new URL(url).origin}${new URL(url).pathname}`
  let body: Uint8Array
  try {
    const response = await fetch(url, {
      maxBytes,
      ...(forced ? { headers: { 'cache-control': 'no-cache' } } : {}),
    })
    if (response.status !== 200) throw new SignatureError('fetch_failed', `status ${response.status}`)
    body = response.body
  } catch (error) {
    throw discoveryError('jwks', error, `${where} could not be fetched`)
  }
  try {
    return indexJwks(readStrictJson(body))
  } catch (error) {
    throw discoveryError('jwks', error, `${where} is malformed`)
  }
}
