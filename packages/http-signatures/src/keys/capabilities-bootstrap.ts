import { SignatureError } from '../errors.js'
import {
  brandJsonResolver,
  type BrandJsonDiscovery,
  type BrandJsonKeyResolver,
  type BrandJsonResolverOptions,
} from './brand-json.js'
import {
  assertKeyOrigin,
  readSigningPosture,
  type SigningPosture,
  type SigningPurpose,
} from './capabilities-posture.js'
import { DocumentCache } from './document-cache.js'
import { isObject } from './json-document.js'
import { forProfile } from './profile-errors.js'
import { MAX_JWKS_CACHE_SECONDS } from './remote-jwks.js'

/**
 * Performs the `get_adcp_capabilities` protocol call on an agent (over MCP or A2A, as the caller speaks it) and
 * answers the response payload. It should honour `signal` (aborted at the timeout) and apply the spec's
 * transport rules: SSRF-safe, connect 5 s, no redirects.
 */
export type GetCapabilities = (agentUrl: string, init: { readonly signal: AbortSignal }) => Promise<unknown>

/** Options of {@link capabilitiesBootstrapResolver}; the brand.json and JWKS options are passed on as they are. */
export interface CapabilitiesBootstrapResolverOptions extends Omit<
  BrandJsonResolverOptions,
  'agentUrl' | 'brandJsonUrl'
> {
  /** The signer's agent URL, exactly as the integration knows it (matched byte for byte in brand.json). */
  readonly agentUrl: string
  /** The `get_adcp_capabilities` call; injected so this package needs no MCP or A2A client. */
  readonly getCapabilities: GetCapabilities
  /** Which `identity.key_origins` entry guards the keys: `request_signing` or `webhook_signing`. */
  readonly purpose: SigningPurpose
  /** Total time budget of one `getCapabilities` call, in milliseconds. Default 10000 (the spec's total budget). */
  readonly capabilitiesTimeoutMs?: number
  /**
   * Accept an `http:` `identity.brand_json_url`. Development only, for loopback test servers (the fetch must
   * allow http too); never in production, where the trust root must be https. Default false.
   */
  readonly allowInsecure?: boolean
}

/** What the bootstrap found: the brand.json discovery plus the capabilities it was anchored on. */
export interface CapabilitiesBootstrapDiscovery extends BrandJsonDiscovery {
  readonly purpose: SigningPurpose
  /** `identity.brand_json_url` as the capabilities declare it (`brandJsonUrl` is where the entry was found). */
  readonly declaredBrandJsonUrl: string
  /** `identity.key_origins[purpose]`, when declared (then it matched the `jwks_uri` host). */
  readonly keyOrigin?: string
  /** The capability field declaring signing for the purpose (`webhook_signing.supported`), if any. */
  readonly posture?: string
}

/** A key resolver that bootstraps from `get_adcp_capabilities` and can report its discovery. */
export interface CapabilitiesBootstrapResolver extends BrandJsonKeyResolver {
  /** Runs (or reads the cached) bootstrap; failures carry request-profile codes. */
  discover(now?: number): Promise<CapabilitiesBootstrapDiscovery>
}

const UNREACHABLE = 'request_signature_capabilities_unreachable'

/**
 * The canonical key-discovery bootstrap of AdCP 3.1 security.mdx ("Discovering an agent's signing keys via
 * `brand_json_url`"), for a verifier that has no agent→JWKS mapping yet:
 *
 * 1. calls `getCapabilities(agentUrl)` within `capabilitiesTimeoutMs`; a rejection, the timeout or an answer
 *    that is not a JSON object is `request_signature_capabilities_unreachable`;
 * 2. reads `identity.brand_json_url` (absent or not https: `request_signature_brand_json_url_missing`, see
 *    {@link readSigningPosture});
 * 3-6, 8. hands that URL to {@link brandJsonResolver} (origin binding, brand.json, byte-equal `agents[]`
 *    match, `jwks_uri`, JWKS and keyid lookup);
 * 7. checks `identity.key_origins[purpose]` against the resolved `jwks_uri` host
 *    (`request_signature_key_origin_mismatch` / `_missing`, see {@link assertKeyOrigin}).
 *
 * Caching: a successful capabilities answer is used for `cacheSeconds` (the brand.json lifetime, default 300)
 * and may answer for `staleIfErrorSeconds` more while later calls fail. A failed call is negatively cached for
 * `negativeCacheSeconds` (default 30, at most 60): no new call before then, the same error is answered.
 * Concurrent first uses share one call. The spec's optional "retry once after 1-5 s of jitter" is not done here
 * (it would hold a verification open for seconds); a caller wanting it can retry inside `getCapabilities`.
 * When a refreshed answer names another `brand_json_url`, discovery starts over from it.
 *
 * Webhook profile: `capabilities_unreachable` is `key_source_unavailable` (answer 503); `brand_json_url_missing`
 * and the key-origin codes are `webhook_signature_key_unknown`.
 *
 * @example
 * const keys = capabilitiesBootstrapResolver({
 *   agentUrl: 'https://ads.seller.example/mcp',
 *   purpose: 'webhook_signing',
 *   getCapabilities: (url, { signal }) => mcpClient(url).callTool('get_adcp_capabilities', {}, { signal }),
 * })
 * const verified = await verifyWebhook(message, { keys, replayStore })
 */
export function capabilitiesBootstrapResolver(
  options: CapabilitiesBootstrapResolverOptions,
): CapabilitiesBootstrapResolver {
  const { getCapabilities, purpose, capabilitiesTimeoutMs, allowInsecure, ...brandOptions } = options
  const { agentUrl } = options
  if (!URL.canParse(agentUrl))
    throw new SignatureError('key_source_invalid', 'agentUrl must be an absolute URL')
  if (purpose !== 'request_signing' && purpose !== 'webhook_signing') {
    throw new SignatureError('key_source_invalid', 'purpose must be request_signing or webhook_signing')
  }
  const timeoutMs = capabilitiesTimeoutMs ?? 10_000
  const cacheSeconds = options.cacheSeconds ?? 300
  const negativeCacheSeconds = options.negativeCacheSeconds ?? 30
  if (
    !(timeoutMs > 0 && Number.isFinite(timeoutMs)) ||
    !(cacheSeconds > 0 && cacheSeconds <= MAX_JWKS_CACHE_SECONDS) ||
    !(negativeCacheSeconds >= 0 && negativeCacheSeconds <= 60)
  ) {
    throw new SignatureError(
      'key_source_invalid',
      'capabilitiesTimeoutMs must be positive, cacheSeconds in (0, 1800] and negativeCacheSeconds in [0, 60]',
    )
  }

  const postures = new DocumentCache<SigningPosture>({
    ttlSeconds: cacheSeconds,
    negativeCacheSeconds,
    staleIfErrorSeconds: options.staleIfErrorSeconds ?? 300,
    refetchCooldownSeconds: 0,
    serveStaleOn: (error) => SignatureError.is(error) && error.code === UNREACHABLE,
    load: async () => {
      const capabilities = await callCapabilities(getCapabilities, agentUrl, timeoutMs)
      return {
        value: readSigningPosture(capabilities, purpose, allowInsecure ? { allowInsecure } : {}),
      }
    },
  })

  let current: { readonly url: string; readonly resolver: BrandJsonKeyResolver } | undefined
  const brandFor = (url: string): BrandJsonKeyResolver => {
    if (current?.url !== url)
      current = { url, resolver: brandJsonResolver({ ...brandOptions, brandJsonUrl: url }) }
    return current.resolver
  }

  const discover = async (now: number) => {
    const posture = (await postures.get(now)).value
    const resolver = brandFor(posture.brandJsonUrl)
    const found = await resolver.discover(now)
    assertKeyOrigin(purpose, posture, found.jwksUri)
    const discovery: CapabilitiesBootstrapDiscovery = {
      ...found,
      purpose,
      declaredBrandJsonUrl: posture.brandJsonUrl,
      ...(posture.keyOrigin === undefined ? {} : { keyOrigin: posture.keyOrigin }),
      ...(posture.posture === undefined ? {} : { posture: posture.posture }),
    }
    return { resolver, discovery }
  }

  return {
    discover: async (now) =>
      (await discover(now ?? options.now?.() ?? Math.floor(Date.now() / 1000))).discovery,
    resolve: async (keyid, context) => {
      let resolver: BrandJsonKeyResolver
      try {
        resolver = (await discover(options.now?.() ?? context.now)).resolver
      } catch (error) {
        throw forProfile(error, context.profile)
      }
      return resolver.resolve(keyid, context)
    },
  }
}

/** Step 1: one `getCapabilities` call, bounded by `timeoutMs`; any failure is `capabilities_unreachable`. */
async function callCapabilities(
  getCapabilities: GetCapabilities,
  agentUrl: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort()
      reject(
        new SignatureError(UNREACHABLE, `get_adcp_capabilities gave no answer within ${timeoutMs} ms`, 7),
      )
    }, timeoutMs)
  })
  let answer: unknown
  try {
    const call = Promise.resolve().then(() => getCapabilities(agentUrl, { signal: controller.signal }))
    answer = await Promise.race([call, timeout])
  } catch (error) {
    if (SignatureError.is(error) && error.code === UNREACHABLE) throw error
    // The cause is kept for logs; the message does not echo it (it may carry internal addresses).
    throw new SignatureError(UNREACHABLE, 'get_adcp_capabilities failed', 7, { cause: error })
  } finally {
    clearTimeout(timer)
  }
  if (!isObject(answer)) {
    throw new SignatureError(UNREACHABLE, 'get_adcp_capabilities did not answer a JSON object', 7)
  }
  return answer
}
