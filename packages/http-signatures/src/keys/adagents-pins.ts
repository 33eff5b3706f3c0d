import { documentHop } from '../discovery/documents.js'
import { SignatureError } from '../errors.js'
import type { AdcpJwk, KeyResolutionContext, KeyResolver, ResolvedKey } from '../types.js'
import { DocumentCache, type Loaded } from './document-cache.js'
import { defaultSafeFetch, type SafeFetch } from './fetch-types.js'
import { isObject, printable, readStrictJson } from './json-document.js'
import { discoveryError, forProfile } from './profile-errors.js'

/** Options of {@link adagentsPinnedResolver}. Durations in seconds. */
export interface AdagentsPinnedResolverOptions {
  /** The signer's agent URL, matched byte for byte against `authorized_agents[].url`. */
  readonly agentUrl: string
  /** The publisher's adagents.json, usually `https://<publisher>/.well-known/adagents.json`. */
  readonly adagentsUrl?: string
  /**
   * Instead of `adagentsUrl`: returns the parsed adagents.json (already past any `authoritative_location`).
   * `forced` asks for a fresh copy. Its documents are cached for `defaultMaxAgeSeconds`.
   */
  readonly fetchAdagents?: (request: { readonly forced: boolean }) => Promise<unknown>
  /** Keys for agents without pins, and for the request profile (pins only govern webhook delivery). */
  readonly fallback?: KeyResolver
  /** The fetch to use with `adagentsUrl`. Default: the SSRF-safe {@link createSafeFetch} with its defaults. */
  readonly fetch?: SafeFetch
  /** Clock for cache bookkeeping, Unix seconds. Default: the verifier's `now` from the resolve context. */
  readonly now?: () => number
  /** Cache lifetime when the response has no `Cache-Control: max-age`. Default 3600. */
  readonly defaultMaxAgeSeconds?: number
  /** Floor and ceiling applied to `max-age` (a `max-age=0` must not mean one fetch per webhook). Default 30 and 86400. */
  readonly minCacheSeconds?: number
  readonly maxCacheSeconds?: number
  /** Minimum time between forced refreshes on an unknown keyid (the first is immediate). Default 30. */
  readonly refreshCooldownSeconds?: number
  /** After a failed fetch, no new fetch for this long. Default 30. */
  readonly negativeCacheSeconds?: number
  /** How long past its lifetime an old adagents.json still answers while fetches fail. Default 3600. */
  readonly staleIfErrorSeconds?: number
  /** Size cap of each adagents.json (pointer and authoritative file). Default 5 MiB. */
  readonly maxBytes?: number
}

interface PinSet {
  /** `undefined`: the publisher pins no keys for this agent. */
  readonly pins: ReadonlyMap<string, AdcpJwk> | undefined
}

/**
 * A {@link KeyResolver} honouring a publisher's `adagents.json` `authorized_agents[].signing_keys[]` pins for
 * sell-side webhook delivery (AdCP 3.1 adagents.mdx `signing_keys`; security.mdx: the pin is authoritative).
 * When the entries whose `url` byte-equals `agentUrl` pin keys, only those keys exist: a keyid not pinned is
 * unknown even if the agent's JWKS has it, and first forces one refresh of adagents.json (sent with
 * `cache-control: no-cache`, then at most one per `refreshCooldownSeconds`, since keyids arrive before any
 * signature is checked). A pin's `revoked_at` rejects signatures whose `created` (or, when the verifier does not
 * pass it, `now`) is at or after it, with `*_key_revoked`. Without pins for the agent, and always for the request
 * profile (pins do not govern operator-side traffic), keys come from `fallback` (usually a
 * {@link brandJsonResolver}). If adagents.json cannot be read and no cached copy answers, resolution fails
 * closed (`key_source_unavailable`) even with a fallback: pins might exist.
 *
 * Pins carry no `adcp_use` or `key_ops`: the returned JWK gets `use: "sig"`, `key_ops: ["verify"]` and
 * `adcp_use: "request-signing"` where absent, because the pin itself is the publisher's authorization of the
 * key for the webhook surface; members the pin does state are kept, so a pin with `use: "enc"` still fails
 * checklist step 8. `Cache-Control: max-age` sets the lifetime (default 1 h, clamped).
 *
 * @example
 * const keys = adagentsPinnedResolver({
 *   adagentsUrl: 'https://publisher.example/.well-known/adagents.json',
 *   agentUrl: 'https://ads.seller.example/mcp',
 *   fallback: brandJsonResolver({ agentUrl: 'https://ads.seller.example/mcp' }),
 * })
 * await keys.resolve(keyid, { profile: 'webhook', now, created })
 */
export function adagentsPinnedResolver(options: AdagentsPinnedResolverOptions): KeyResolver {
  const { agentUrl, fallback } = options
  if ((options.adagentsUrl === undefined) === (options.fetchAdagents === undefined)) {
    throw new SignatureError('key_source_invalid', 'give exactly one of adagentsUrl and fetchAdagents')
  }
  if (options.adagentsUrl !== undefined && !URL.canParse(options.adagentsUrl)) {
    throw new SignatureError('key_source_invalid', 'adagentsUrl must be an absolute URL')
  }
  const defaultMaxAge = options.defaultMaxAgeSeconds ?? 3600
  const clamp = (seconds: number) =>
    Math.min(Math.max(seconds, options.minCacheSeconds ?? 30), options.maxCacheSeconds ?? 86_400)
  const fetch = options.fetch ?? defaultSafeFetch()
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024

  const load = async (forced: boolean): Promise<Loaded<PinSet>> => {
    if (options.fetchAdagents) {
      let document: unknown
      try {
        document = await options.fetchAdagents({ forced })
      } catch (error) {
        throw discoveryError('adagents', error, 'adagents.json could not be loaded')
      }
      return { value: pinSet(document, agentUrl), ttlSeconds: clamp(defaultMaxAge) }
    }
    const first = await fetchAdagentsJson(fetch, options.adagentsUrl!, maxBytes, forced)
    let { document, maxAge } = first
    const hop = documentHop('adagents', document)
    if (hop.kind === 'invalid_pointer') throw pinError(hop.message)
    if (hop.kind === 'pointer') {
      const second = await fetchAdagentsJson(fetch, hop.location, maxBytes, forced)
      // One document-level hop (MAX_DOCUMENT_REDIRECTS): the authoritative copy must list the agents itself.
      if (isObject(second.document) && !('authorized_agents' in second.document)) {
        throw pinError('adagents.json points elsewhere more than once')
      }
      document = second.document
      maxAge = Math.min(maxAge ?? Infinity, second.maxAge ?? Infinity)
    }
    const ttl = maxAge === undefined || maxAge === Infinity ? defaultMaxAge : maxAge
    return { value: pinSet(document, agentUrl), ttlSeconds: clamp(ttl) }
  }

  const cache = new DocumentCache<PinSet>({
    ttlSeconds: clamp(defaultMaxAge),
    negativeCacheSeconds: options.negativeCacheSeconds ?? 30,
    staleIfErrorSeconds: options.staleIfErrorSeconds ?? 3600,
    refetchCooldownSeconds: options.refreshCooldownSeconds ?? 30,
    load: (forced) => load(forced),
  })

  return {
    resolve: async (keyid, context) => {
      if (context.profile !== 'webhook') return fallback ? fallback.resolve(keyid, context) : undefined
      const now = options.now?.() ?? context.now
      let pins: PinSet['pins']
      try {
        const read = await cache.get(now)
        pins = read.value.pins
        if (pins !== undefined && !pins.has(keyid) && !read.loaded) {
          if (read.degraded !== undefined) throw read.degraded
          const refreshed = await cache.refetch(now)
          if (refreshed !== undefined) pins = refreshed.pins
        }
      } catch (error) {
        throw forProfile(error, context.profile)
      }
      if (pins === undefined) return fallback ? fallback.resolve(keyid, context) : undefined
      const pin = pins.get(keyid)
      if (pin === undefined) return undefined
      assertNotRevoked(pin, context)
      return { jwk: pin, signer: agentUrl } satisfies ResolvedKey
    },
  }
}

function pinError(message: string): SignatureError {
  return new SignatureError('request_signature_jwks_unavailable', `adagents.json: ${message}`, 7)
}

async function fetchAdagentsJson(
  fetch: SafeFetch,
  url: string,
  maxBytes: number,
  forced: boolean,
): Promise<{ readonly document: unknown; readonly maxAge: number | undefined }> {
  const where = `adagents.json ${URL.canParse(url) ? new URL(url).origin : ''}`
  let response
  try {
    response = await fetch(url, { maxBytes, ...(forced ? { headers: { 'cache-control': 'no-cache' } } : {}) })
    if (response.status !== 200) throw new SignatureError('fetch_failed', `status ${response.status}`)
  } catch (error) {
    throw discoveryError('adagents', error, `${where} could not be fetched`)
  }
  try {
    return {
      document: readStrictJson(response.body),
      maxAge: maxAgeOf(response.headers.get('cache-control')),
    }
  } catch (error) {
    throw discoveryError('adagents', error, `${where} is malformed`)
  }
}

/** `max-age` of a `Cache-Control` value; `no-store` / `no-cache` count as 0. */
function maxAgeOf(value: string | null): number | undefined {
  if (value === null) return undefined
  if (/(?:^|,)\s*no-(?:store|cache)\s*(?:,|$)/i.test(value)) return 0
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)/i.exec(value)
  return match ? Number(match[1]) : undefined
}

/** The pins of every `authorized_agents[]` entry for the agent, with the JWK members verifiers expect. */
function pinSet(document: unknown, agentUrl: string): PinSet {
  if (!isObject(document)) throw pinError('not a JSON object')
  const agents = document.authorized_agents
  if (agents === undefined) return { pins: undefined }
  if (!Array.isArray(agents)) throw pinError('authorized_agents is not an array')
  let pins: Map<string, AdcpJwk> | undefined
  for (const entry of agents as unknown[]) {
    if (!isObject(entry) || entry.url !== agentUrl || entry.signing_keys === undefined) continue
    const keys = entry.signing_keys
    if (!Array.isArray(keys) || keys.length === 0) throw pinError('signing_keys is not a non-empty array')
    pins ??= new Map()
    for (const key of keys as unknown[]) {
      if (!isObject(key) || typeof key.kid !== 'string' || key.kid === '' || typeof key.kty !== 'string') {
        throw pinError('a signing key lacks kid or kty')
      }
      const jwk: AdcpJwk = Object.freeze({
        use: 'sig',
        key_ops: ['verify'],
        adcp_use: 'request-signing',
        ...key,
        kid: key.kid,
        kty: key.kty,
      })
      const earlier = pins.get(key.kid)
      if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(jwk)) {
        throw pinError(`kid "${printable(key.kid)}" is pinned twice with different keys`)
      }
      pins.set(key.kid, jwk)
    }
  }
  return { pins }
}

/** security.mdx / agent-signing-key.json: reject signatures made at or after `revoked_at`. */
function assertNotRevoked(pin: AdcpJwk, context: KeyResolutionContext): void {
  if (pin.revoked_at === undefined) return
  const revokedAt = typeof pin.revoked_at === 'string' ? Date.parse(pin.revoked_at) / 1000 : Number.NaN
  const signedAt = context.created ?? context.now
  // An unparseable revoked_at fails closed: NaN makes the comparison false.
  if (signedAt < revokedAt) return
  const code =
    context.profile === 'webhook' ? 'webhook_signature_key_revoked' : 'request_signature_key_revoked'
  throw new SignatureError(code, `key "${printable(pin.kid)}" is revoked by the publisher's pin`, 9)
}
