import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { generateSigningKey, type GeneratedSigningKey } from '../keygen.js'
import { signRequest, verifyRequest } from '../request.js'
import { signWebhook, verifyWebhook } from '../webhook.js'
import {
  capabilitiesBootstrapResolver,
  type CapabilitiesBootstrapResolverOptions,
  type GetCapabilities,
} from './capabilities-bootstrap.js'
import { capabilitiesDocument } from '../testing/capabilities-fixture.js'
import type { SafeFetch } from './fetch-types.js'
import {
  dynamic,
  failure,
  json,
  startServer,
  testClock,
  testFetch,
  type TestServer,
} from '../testing/test-server.js'

const AGENT = 'https://agent.seller.test/mcp'
const BRAND_URL = 'https://brand.seller.test/.well-known/brand.json'
const KEYS_ORIGIN = 'https://keys.seller.test'
const CAPABILITIES = '/capabilities'

let signing: GeneratedSigningKey
let server: TestServer
let clock: ReturnType<typeof testClock>
let capabilities: Record<string, unknown>
let brand: unknown
let calls: string[]

beforeAll(async () => {
  signing = await generateSigningKey({ alg: 'ed25519', kid: 'seller-2026' })
})

beforeEach(async () => {
  clock = testClock()
  calls = []
  server = await startServer({ '/.well-known/jwks.json': json(signing.jwks) })
  server.route(
    CAPABILITIES,
    dynamic(() => capabilities),
  )
  server.route(
    '/.well-known/brand.json',
    dynamic(() => brand),
  )
  capabilities = capabilitiesDocument({
    brand_json_url: BRAND_URL,
    key_origins: { request_signing: KEYS_ORIGIN, webhook_signing: KEYS_ORIGIN },
  })
  brand = {
    agents: [{ type: 'sales', id: 'sales', url: AGENT, jwks_uri: `${KEYS_ORIGIN}/.well-known/jwks.json` }],
  }
})
afterEach(() => server.close())

/** The caller's protocol call: a real HTTP GET of the capabilities document, honouring the abort signal. */
const getCapabilities: GetCapabilities = async (agentUrl, { signal }) => {
  calls.push(agentUrl)
  const response = await fetch(`${server.origin}${CAPABILITIES}`, { signal })
  if (response.status !== 200) throw new Error(`status ${response.status}`)
  return response.json()
}

/** The SSRF-safe fetch, with every `https://<host>/` sent to the loopback server over http (host name kept). */
const loopbackFetch = (): SafeFetch => {
  const base = testFetch()
  return (url, init) => base(url.replace(/^https:\/\/([^/:]+)\//, `http://$1:${server.port}/`), init)
}

const resolver = (options: Partial<CapabilitiesBootstrapResolverOptions> = {}) =>
  capabilitiesBootstrapResolver({
    agentUrl: AGENT,
    purpose: 'request_signing',
    getCapabilities,
    fetch: loopbackFetch(),
    now: clock.now,
    ...options,
  })
const request = () => ({ profile: 'request' as const, now: clock.now() })
const webhook = () => ({ profile: 'webhook' as const, now: clock.now() })
const hostsFetched = () => server.requests.map((seen) => seen.headers.host?.replace(/:\d+$/, ''))
const message = {
  method: 'POST',
  url: 'https://buyer.example/adcp/create_media_buy',
  headers: { 'content-type': 'application/json' },
  body: '{"plan_id":"plan_001"}',
}

describe('capabilitiesBootstrapResolver', () => {
  it('verifies a signed request through capabilities, brand_json_url, brand.json and the JWKS', async () => {
    const keys = resolver()
    const signed = await signRequest(message, { key: signing.privateJwk, now: clock.now() })
    const result = await verifyRequest(signed, { keys, now: clock.now(), profile: '3.2' })
    expect(result).toMatchObject({ status: 'verified', keyid: 'seller-2026', signer: AGENT })
    expect(calls).toEqual([AGENT])
    expect(hostsFetched()).toEqual(['127.0.0.1', 'brand.seller.test', 'keys.seller.test'])
    expect(await keys.discover()).toEqual({
      agentUrl: AGENT,
      brandJsonUrl: BRAND_URL,
      jwksUri: `${KEYS_ORIGIN}/.well-known/jwks.json`,
      binding: { agentSite: 'seller.test', brandSite: 'seller.test', via: 'same-site' },
      purpose: 'request_signing',
      declaredBrandJsonUrl: BRAND_URL,
      keyOrigin: KEYS_ORIGIN,
      posture: 'request_signing.supported_for',
    })
  })

  it('verifies a signed webhook with the webhook_signing origin', async () => {
    const keys = resolver({ purpose: 'webhook_signing' })
    const signed = await signWebhook(message, { key: signing.privateJwk, now: clock.now() })
    expect(await verifyWebhook(signed, { keys, now: clock.now() })).toMatchObject({
      keyid: 'seller-2026',
      signer: AGENT,
    })
    expect((await keys.discover()).posture).toBe('webhook_signing.supported')
  })

  it('refuses a jwks_uri on another host than key_origins, before fetching the JWKS', async () => {
    capabilities = capabilitiesDocument({
      brand_json_url: BRAND_URL,
      key_origins: { request_signing: 'https://other.seller.test', webhook_signing: KEYS_ORIGIN },
    })
    const error = await failure(resolver().resolve('seller-2026', request()))
    expect(error.code).toBe('request_signature_key_origin_mismatch')
    expect(error.message).toContain('expected origin other.seller.test')
    expect(error.message).toContain('actual origin keys.seller.test')
    expect(hostsFetched()).not.toContain('keys.seller.test')
    expect((await failure(resolver().resolve('seller-2026', webhook()))).code).toBe(
      'webhook_signature_key_unknown',
    )
    expect(await resolver({ purpose: 'webhook_signing' }).resolve('seller-2026', webhook())).toBeDefined()
  })

  it('refuses signing declared without the key_origins entry of the purpose', async () => {
    capabilities = capabilitiesDocument({
      brand_json_url: BRAND_URL,
      key_origins: { webhook_signing: KEYS_ORIGIN },
    })
    const error = await failure(resolver().resolve('seller-2026', request()))
    expect(error.code).toBe('request_signature_key_origin_missing')
    expect(error.message).toContain('request_signing.supported_for')
    expect((await failure(resolver().resolve('seller-2026', webhook()))).code).toBe(
      'webhook_signature_key_unknown',
    )
    capabilities = capabilitiesDocument({ brand_json_url: BRAND_URL })
    expect((await failure(resolver().resolve('seller-2026', request()))).code).toBe(
      'request_signature_key_origin_missing',
    )
  })

  it('skips the origin check for a purpose the agent does not sign for', async () => {
    capabilities = capabilitiesDocument(
      { brand_json_url: BRAND_URL, key_origins: { webhook_signing: KEYS_ORIGIN } },
      { request_signing: { supported: true, supported_for: [], required_for: [] } },
    )
    const keys = resolver()
    expect(await keys.resolve('seller-2026', request())).toMatchObject({ signer: AGENT })
    expect((await keys.discover()).posture).toBeUndefined()
  })

  it.each([
    ['absent while signing is declared', {}, {}, 'although the agent declares request_signing'],
    ['not https', { brand_json_url: 'http://brand.seller.test/brand.json' }, {}, 'is not an https URL'],
    [
      'absent and nothing declared',
      {},
      { request_signing: { supported: false }, webhook_signing: { supported: false } },
      'no trust root',
    ],
  ])('answers brand_json_url_missing for a brand_json_url %s', async (_name, identity, overrides, text) => {
    capabilities = capabilitiesDocument(identity, overrides)
    const error = await failure(resolver().resolve('seller-2026', request()))
    expect(error.code).toBe('request_signature_brand_json_url_missing')
    expect(error.message).toContain(text)
    expect((await failure(resolver().resolve('seller-2026', webhook()))).code).toBe(
      'webhook_signature_key_unknown',
    )
    expect(hostsFetched()).not.toContain('brand.seller.test')
  })

  it('accepts an http brand_json_url only with allowInsecure', async () => {
    capabilities = capabilitiesDocument({
      brand_json_url: `http://brand.seller.test:${server.port}/.well-known/brand.json`,
      key_origins: { request_signing: KEYS_ORIGIN },
    })
    expect((await failure(resolver().resolve('seller-2026', request()))).code).toBe(
      'request_signature_brand_json_url_missing',
    )
    const keys = resolver({ allowInsecure: true })
    expect(await keys.resolve('seller-2026', request())).toMatchObject({ signer: AGENT })
  })

  it.each([
    ['an HTTP error', json({ error: 'down' }, {}, 503)],
    ['an array', json([])],
    ['JSON null', json('null')],
  ])('calls capabilities answering %s unreachable', async (_name, route) => {
    server.route(CAPABILITIES, route)
    const error = await failure(resolver().resolve('seller-2026', request()))
    expect(error.code).toBe('request_signature_capabilities_unreachable')
    expect((await failure(resolver().resolve('seller-2026', webhook()))).code).toBe('key_source_unavailable')
  })

  it('calls capabilities that never answer unreachable after the timeout, aborting the call', async () => {
    server.route(CAPABILITIES, () => undefined)
    let aborted = false
    const slow: GetCapabilities = async (agentUrl, init) => {
      init.signal.addEventListener('abort', () => void (aborted = true))
      return getCapabilities(agentUrl, init)
    }
    const error = await failure(
      resolver({ getCapabilities: slow, capabilitiesTimeoutMs: 50 }).resolve('seller-2026', request()),
    )
    expect(error.code).toBe('request_signature_capabilities_unreachable')
    expect(aborted).toBe(true)
  })

  it('negatively caches a capabilities failure, then recovers after the window', async () => {
    server.route(CAPABILITIES, json({}, {}, 500))
    const keys = resolver({ negativeCacheSeconds: 60 })
    expect((await failure(keys.resolve('seller-2026', request()))).code).toBe(
      'request_signature_capabilities_unreachable',
    )
    server.route(
      CAPABILITIES,
      dynamic(() => capabilities),
    )
    clock.advance(59)
    expect((await failure(keys.resolve('seller-2026', request()))).code).toBe(
      'request_signature_capabilities_unreachable',
    )
    expect(calls).toHaveLength(1)
    clock.advance(1)
    expect(await keys.resolve('seller-2026', request())).toMatchObject({ signer: AGENT })
    expect(calls).toHaveLength(2)
  })

  it('caches capabilities for the brand.json lifetime and drops a refreshed answer without brand_json_url', async () => {
    const keys = resolver({ cacheSeconds: 120 })
    await keys.resolve('seller-2026', request())
    clock.advance(119)
    await keys.resolve('seller-2026', request())
    expect(calls).toHaveLength(1)
    capabilities = capabilitiesDocument(undefined)
    clock.advance(1)
    expect((await failure(keys.resolve('seller-2026', request()))).code).toBe(
      'request_signature_brand_json_url_missing',
    )
    expect(calls).toHaveLength(2)
  })

  it('keeps answering from the last capabilities while a refresh is unreachable', async () => {
    const keys = resolver({ cacheSeconds: 120, staleIfErrorSeconds: 300 })
    await keys.resolve('seller-2026', request())
    server.route(CAPABILITIES, json({}, {}, 500))
    clock.advance(200)
    expect(await keys.resolve('seller-2026', request())).toMatchObject({ signer: AGENT })
    expect(calls).toHaveLength(2)
  })
})
