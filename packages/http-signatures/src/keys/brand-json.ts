import { documentHop } from '../discovery/documents.js'
import { SignatureError } from '../errors.js'
import type { KeyResolver } from '../types.js'
import { assertBrandOrigin, type BrandOriginBinding } from './brand-origin.js'
import { DocumentCache } from './document-cache.js'
import { defaultSafeFetch, type SafeFetch } from './fetch-types.js'
import { isObject, readStrictJson } from './json-document.js'
import { discoveryError, forProfile } from './profile-errors.js'
import { MAX_JWKS_CACHE_SECONDS, remoteJwksResolver } from './remote-jwks.js'

/** Options of {@link brandJsonResolver}. Durations in seconds. */
export interface BrandJsonResolverOptions {
  /** The signer's agent URL, exactly as the integration knows it: matched byte for byte against `agents[].url`. */
  readonly agentUrl: string
  /**
   * The agent's `identity.brand_json_url` (bootstrap path). Its eTLD+1 must match the agent's or be bound by
   * `authorized_operators[]`. Default: `/.well-known/brand.json` at the origin of `agentUrl`.
   * {@link capabilitiesBootstrapResolver} reads it from `get_adcp_capabilities` and sets it.
   */
  readonly brandJsonUrl?: string
  /** The fetch to use. Default: the SSRF-safe {@link createSafeFetch} with its defaults. */
  readonly fetch?: SafeFetch
  /** Clock for cache bookkeeping, Unix seconds. Default: the verifier's `now` from the resolve context. */
  readonly now?: () => number
  /** How long a brand.json discovery and a JWKS are used. Default 300; at most 1800. */
  readonly cacheSeconds?: number
  /** After a failed brand.json or JWKS fetch, no new fetch for this long. Default 30; at most 60. */
  readonly negativeCacheSeconds?: number
  /** Minimum time between kid-miss JWKS refetches (the first is immediate). Default 30. */
  readonly refetchCooldownSeconds?: number
  /** How long past its lifetime a discovery or JWKS still answers while fetches fail. Default 300. */
  readonly staleIfErrorSeconds?: number
  /** Size cap of each brand.json. Default 262144. */
  readonly maxBytes?: number
  /** Size cap of the JWKS. Default 65536. */
  readonly jwksMaxBytes?: number
  /** Called when a refreshed brand.json names another `jwks_uri` than before (security.mdx: alarm on it). */
  readonly onJwksUriChange?: (change: { readonly previous: string; readonly next: string }) => void
}

/** What brand.json discovery found for the agent. */
export interface BrandJsonDiscovery {
  readonly agentUrl: string
  /** The brand.json that held the `agents[]` entry (after at most one redirect hop). */
  readonly brandJsonUrl: string
  readonly jwksUri: string
  /** Set on the bootstrap path (`brandJsonUrl` given): how the origin binding held. */
  readonly binding?: BrandOriginBinding
}

/** A {@link KeyResolver} that can also report its brand.json discovery. */
export interface BrandJsonKeyResolver extends KeyResolver {
  /** Runs (or reads the cached) discovery; failures carry request-profile codes. */
  discover(now?: number): Promise<BrandJsonDiscovery>
}

const DEFINITIVE = new Set([
  'request_signature_agent_not_in_brand_json',
  'request_signature_brand_json_ambiguous',
  'request_signature_brand_origin_mismatch',
])

/**
 * Resolves keys the way AdCP 3.1 security.mdx tells a verifier to find a signer's keys (webhook callbacks
 * steps 1 to 4; brand_json_url discovery steps 3 to 5 and 8): fetch the operator's brand.json (no HTTP
 * redirects, 256 KiB, strict JSON), follow at most one document-level redirect (`authoritative_location`, or
 * the house redirect `{ "house": "<domain>" }` to that domain's `/.well-known/brand.json`), take the single
 * `agents[]` entry whose `url` byte-equals `agentUrl` (top-level `agents`, `house.agents` and
 * `brands[].agents` are all searched), then resolve keyids from its `jwks_uri` (default
 * `/.well-known/jwks.json` at the agent's origin) with {@link remoteJwksResolver}, reporting `agentUrl` as
 * the signer. Steps 1, 2 and 7 of the bootstrap (`get_adcp_capabilities`, `identity.brand_json_url`,
 * `identity.key_origins`) are {@link capabilitiesBootstrapResolver}, which builds this resolver with the
 * declared `brandJsonUrl`; use it when the agent's brand.json location is not known from the integration.
 *
 * Errors (request profile → webhook profile): `request_signature_brand_json_unreachable` /
 * `_malformed` → `key_source_unavailable`; `request_signature_agent_not_in_brand_json` /
 * `_brand_json_ambiguous` / `_brand_origin_mismatch` → `webhook_signature_key_unknown`; JWKS failures as in
 * {@link remoteJwksResolver}. Unreachable or malformed documents may be answered from an expired discovery
 * (`staleIfErrorSeconds`); a brand.json that no longer lists the agent never is.
 *
 * @example
 * const keys = brandJsonResolver({ agentUrl: 'https://ads.seller.example/mcp' })
 * const found = await keys.resolve(keyid, { profile: 'webhook', now }) // { jwk, signer: 'https://ads.seller.example/mcp' }
 */
export function brandJsonResolver(options: BrandJsonResolverOptions): BrandJsonKeyResolver {
  const { agentUrl } = options
  if (!URL.canParse(agentUrl))
    throw new SignatureError('key_source_invalid', 'agentUrl must be an absolute URL')
  if (options.brandJsonUrl !== undefined && !URL.canParse(options.brandJsonUrl)) {
    throw new SignatureError('key_source_invalid', 'brandJsonUrl must be an absolute URL')
  }
  const cacheSeconds = options.cacheSeconds ?? 300
  const negativeCacheSeconds = options.negativeCacheSeconds ?? 30
  if (
    !(cacheSeconds > 0 && cacheSeconds <= MAX_JWKS_CACHE_SECONDS) ||
    !(negativeCacheSeconds >= 0 && negativeCacheSeconds <= 60)
  ) {
    throw new SignatureError(
      'key_source_invalid',
      'cacheSeconds must be in (0, 1800] and negativeCacheSeconds in [0, 60]',
    )
  }
  const fetch = options.fetch ?? defaultSafeFetch()
  const maxBytes = options.maxBytes ?? 262_144
  const startUrl = options.brandJsonUrl ?? new URL('/.well-known/brand.json', agentUrl).href

  const discoveries = new DocumentCache<BrandJsonDiscovery>({
    ttlSeconds: cacheSeconds,
    negativeCacheSeconds,
    staleIfErrorSeconds: options.staleIfErrorSeconds ?? 300,
    refetchCooldownSeconds: 0,
    serveStaleOn: (error) => !(SignatureError.is(error) && DEFINITIVE.has(error.code)),
    load: async (_forced, now) => {
      let url = startUrl
      let document = await fetchBrandJson(fetch, url, maxBytes)
      const next = redirectTarget(document)
      if (next !== undefined) {
        url = next
        document = await fetchBrandJson(fetch, url, maxBytes)
        if (redirectTarget(document) !== undefined) throw malformed('brand.json redirects more than once')
      }
      const binding =
        options.brandJsonUrl === undefined
          ? undefined
          : assertBrandOrigin(agentUrl, options.brandJsonUrl, {
              authorizedOperators: document.authorized_operators,
              now,
            })
      const jwksUri = agentJwksUri(document, agentUrl)
      return { value: { agentUrl, brandJsonUrl: url, jwksUri, ...(binding ? { binding } : {}) } }
    },
  })

  let current: { readonly uri: string; readonly resolver: KeyResolver } | undefined
  const jwksFor = (uri: string): KeyResolver => {
    if (current?.uri === uri) return current.resolver
    if (current) options.onJwksUriChange?.({ previous: current.uri, next: uri })
    const resolver = remoteJwksResolver({
      url: uri,
      fetch,
      cacheSeconds,
      negativeCacheSeconds,
      signer: agentUrl,
      ...(options.now ? { now: options.now } : {}),
      ...(options.refetchCooldownSeconds === undefined
        ? {}
        : { refetchCooldownSeconds: options.refetchCooldownSeconds }),
      ...(options.staleIfErrorSeconds === undefined
        ? {}
        : { staleIfErrorSeconds: options.staleIfErrorSeconds }),
      ...(options.jwksMaxBytes === undefined ? {} : { maxBytes: options.jwksMaxBytes }),
    })
    current = { uri, resolver }
    return resolver
  }

  const discover = async (now: number) => (await discoveries.get(now)).value
  return {
    discover: (now) => discover(now ?? options.now?.() ?? Math.floor(Date.now() / 1000)),
    resolve: async (keyid, context) => {
      let discovery: BrandJsonDiscovery
      try {
        discovery = await discover(options.now?.() ?? context.now)
      } catch (error) {
        throw forProfile(error, context.profile)
      }
      return jwksFor(discovery.jwksUri).resolve(keyid, context)
    },
  }
}

function malformed(message: string, cause?: unknown): SignatureError {
  return new SignatureError(
    'request_signature_brand_json_malformed',
    message,
    7,
    cause === undefined ? undefined : { cause },
  )
}

async function fetchBrandJson(
  fetch: SafeFetch,
  url: string,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const where = `brand.json ${new URL(url).origin}${new URL(url).pathname}`
  let body: Uint8Array
  try {
    const response = await fetch(url, { maxBytes })
    if (response.status !== 200) throw new SignatureError('fetch_failed', `status ${response.status}`)
    body = response.body
  } catch (error) {
    throw discoveryError('brand_json', error, `${where} could not be fetched`)
  }
  let document: unknown
  try {
    document = readStrictJson(body)
  } catch (error) {
    throw discoveryError('brand_json', error, `${where} is malformed`)
  }
  if (!isObject(document)) throw malformed(`${where} is not a JSON object`)
  return document
}

/** The target of a redirect-variant brand.json (the shared discovery rule), or `undefined` for data. */
function redirectTarget(document: Record<string, unknown>): string | undefined {
  const hop = documentHop('brand_json', document)
  if (hop.kind === 'invalid_pointer') throw malformed(hop.message)
  return hop.kind === 'pointer' ? hop.location : undefined
}

/** The `jwks_uri` of the one `agents[]` entry whose `url` byte-equals the agent URL. */
function agentJwksUri(document: Record<string, unknown>, agentUrl: string): string {
  const lists: unknown[] = []
  if ('agents' in document) lists.push(document.agents)
  if (isObject(document.house) && 'agents' in document.house) lists.push(document.house.agents)
  if (Array.isArray(document.brands)) {
    for (const brand of document.brands as unknown[])
      if (isObject(brand) && 'agents' in brand) lists.push(brand.agents)
  }
  const matches: Record<string, unknown>[] = []
  for (const list of lists) {
    if (!Array.isArray(list)) throw malformed('agents is not an array')
    for (const entry of list as unknown[]) {
      if (!isObject(entry)) throw malformed('an agents[] entry is not an object')
      if (entry.url === agentUrl) matches.push(entry)
    }
  }
  if (matches.length === 0) {
    throw new SignatureError(
      'request_signature_agent_not_in_brand_json',
      'no agents[] entry has this agent url',
      7,
    )
  }
  if (matches.length > 1) {
    throw new SignatureError(
      'request_signature_brand_json_ambiguous',
      `${matches.length} agents[] entries have this agent url`,
      7,
    )
  }
  const jwksUri = matches[0]!.jwks_uri
  if (jwksUri === undefined) return new URL('/.well-known/jwks.json', agentUrl).href
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri))
    throw malformed('jwks_uri is not an absolute URL')
  return jwksUri
}
