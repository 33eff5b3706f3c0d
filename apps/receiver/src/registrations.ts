/**
 * Registrations as the receiver core needs them: stored records turned into {@link Registration}s with their
 * key sources. Registrations never change once created, so each is built once per instance and cached (a
 * remote JWKS or brand.json resolver keeps its own cache across deliveries); a miss reads the database, so a
 * registration created through another instance is found at once.
 */
import { getAgentCapabilities } from '@adwire/agent-client'
import {
  adagentsPinnedResolver,
  brandJsonResolver,
  capabilitiesBootstrapResolver,
  jwksResolver,
  remoteJwksResolver,
  revocationList,
  type AdcpJwk,
  type KeyResolver,
  type SafeFetch,
} from '@adwire/http-signatures'
import type { Registration } from '@adwire/webhooks'
import type { ReceiverDatabase, RegistrationRecord } from './db/types.js'
import { adagentsUrlOf, withRevocation } from './key-checks.js'

/**
 * Registration ids in URLs and on the command line. New ones are 32 lowercase hex characters (128 random bits),
 * so webhook URLs cannot be guessed and an id never starts with `-` (which a command line would read as an
 * option); ids made before (base64url) stay valid.
 */
export const REGISTRATION_ID = /^[A-Za-z0-9_-]{1,64}$/

export const newRegistrationId = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex')

/** How many built registrations one instance keeps (least recently used out first). */
const CACHE_SIZE = 10_000

export interface RegistrationCache {
  /** The registration with this id, or undefined. */
  get(id: string): Promise<Registration | undefined>
}

/** Where RFC 9421 registrations get their keys from. */
export interface KeySources {
  /** SSRF-safe GETs of JWKS, brand.json, adagents.json and revocation lists. */
  readonly fetch: SafeFetch
  /** SSRF-safe calls of sellers' agents (`get_adcp_capabilities`). */
  readonly agentFetch: typeof fetch
  /** Development only: an `http:` `identity.brand_json_url` is accepted. */
  readonly allowInsecure: boolean
}

/**
 * @example
 * const registrations = registrationCache(db, { fetch: createSafeFetch(), agentFetch, allowInsecure: false })
 * const receiver = createWebhookReceiver({ registration: (request) => registrations.get(idOf(request)), … })
 */
export function registrationCache(db: ReceiverDatabase, sources: KeySources): RegistrationCache {
  const cache = new Map<string, Registration>()
  return {
    async get(id) {
      const cached = cache.get(id)
      if (cached) {
        cache.delete(id)
        cache.set(id, cached)
        return cached
      }
      if (!REGISTRATION_ID.test(id)) return undefined
      const record = await db.getRegistration(id)
      if (!record) return undefined
      const registration = toReceiverRegistration(record, sources)
      cache.set(id, registration)
      if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
      return registration
    },
  }
}

/** The core's view of a stored registration. */
export function toReceiverRegistration(record: RegistrationRecord, sources: KeySources): Registration {
  const auth = record.auth
  const common = {
    id: record.id,
    ...(record.shape ? { shape: record.shape } : {}),
    ...(record.token ? { token: record.token } : {}),
    ...(record.retryHorizonSeconds !== undefined ? { retryHorizonSeconds: record.retryHorizonSeconds } : {}),
    // The seller's keyspace when given, whatever the mode; otherwise the core keys per registration (or agent).
    ...(record.sender ? { sender: record.sender } : {}),
  }
  switch (auth.mode) {
    case 'hmac':
      return { ...common, auth: { mode: 'hmac', secret: auth.secret } }
    case 'bearer':
      return { ...common, auth: { mode: 'bearer', token: auth.token } }
    case 'rfc9421':
      return { ...common, auth: { mode: 'rfc9421', keys: keysOf(record, sources) } }
  }
}

/**
 * The key source of an RFC 9421 registration: its JWKS, jwks_uri or brand.json agent, under the publisher's
 * adagents.json pins when it names a publisher, and checked against the seller's revocation list when it
 * names one.
 */
function keysOf(record: RegistrationRecord, sources: KeySources): KeyResolver {
  const { fetch } = sources
  const auth = record.auth
  let keys: KeyResolver
  if ('jwks' in auth) {
    keys = jwksResolver(auth.jwks as unknown as { keys: AdcpJwk[] })
  } else if ('jwksUri' in auth) {
    keys = remoteJwksResolver({ url: auth.jwksUri, fetch })
  } else if ('discovery' in auth) {
    // The canonical bootstrap: get_adcp_capabilities → identity.brand_json_url → brand.json → jwks_uri, with
    // the identity.key_origins check for webhook signing.
    const protocol = auth.agentProtocol ?? 'mcp'
    keys = capabilitiesBootstrapResolver({
      agentUrl: auth.agentUrl,
      purpose: 'webhook_signing',
      getCapabilities: (agentUrl, { signal }) =>
        getAgentCapabilities(agentUrl, { protocol, signal, fetch: sources.agentFetch }),
      fetch,
      allowInsecure: sources.allowInsecure,
    })
  } else if ('agentUrl' in auth) {
    // brand.json discovery names the signer (agents[].url): registrations of one agent share its keyspace
    // (unless a configured sender names another).
    keys = brandJsonResolver({
      agentUrl: auth.agentUrl,
      ...(auth.brandJsonUrl ? { brandJsonUrl: auth.brandJsonUrl } : {}),
      fetch,
    })
  } else {
    throw new Error(`registration ${record.id} is not an RFC 9421 registration`)
  }
  if ('agentUrl' in auth && record.publisherDomain) {
    // Pins are authoritative: when the publisher pins keys for this agent only those verify; without pins
    // for it, the discovered keys do; an unreadable adagents.json fails closed (key_source_unavailable).
    keys = adagentsPinnedResolver({
      agentUrl: auth.agentUrl,
      adagentsUrl: adagentsUrlOf(record.publisherDomain),
      fallback: keys,
      fetch,
    })
  }
  return record.revocationUrl
    ? withRevocation(keys, revocationList({ url: record.revocationUrl, fetch }))
    : keys
}

/** What the API shows of a registration: never its secrets. */
export function publicRegistration(record: RegistrationRecord, baseUrl: string) {
  const auth = record.auth
  return {
    id: record.id,
    url: `${baseUrl}/webhooks/${record.id}`,
    auth: auth.mode,
    ...('jwks' in auth ? { kids: auth.jwks.keys.map((key) => key.kid) } : {}),
    ...('jwksUri' in auth ? { jwks_uri: auth.jwksUri } : {}),
    ...('agentUrl' in auth ? { agent_url: auth.agentUrl } : {}),
    ...('brandJsonUrl' in auth ? { brand_json_url: auth.brandJsonUrl } : {}),
    ...('discovery' in auth
      ? { key_discovery: auth.discovery, agent_protocol: auth.agentProtocol ?? 'mcp' }
      : {}),
    ...(record.shape ? { shape: record.shape } : {}),
    ...(record.label ? { label: record.label } : {}),
    ...(record.sender ? { sender: record.sender } : {}),
    ...(record.publisherDomain ? { publisher_domain: record.publisherDomain } : {}),
    ...(record.revocationUrl ? { revocation_url: record.revocationUrl } : {}),
    token_required: record.token !== undefined,
    created_at: new Date(record.createdAt * 1000).toISOString(),
  }
}
