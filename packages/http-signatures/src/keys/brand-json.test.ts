import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { brandJsonResolver, type BrandJsonResolverOptions } from './brand-json.js'
import type { SafeFetch } from './fetch-types.js'
import {
  dynamic,
  failure,
  fakeKey,
  json,
  startServer,
  testClock,
  testFetch,
  type TestServer,
} from '../testing/test-server.js'

let server: TestServer
let clock: ReturnType<typeof testClock>
let brand: unknown
let agentUrl: string
const BRAND = '/.well-known/brand.json'
const JWKS = '/.well-known/jwks.json'

beforeEach(async () => {
  clock = testClock()
  server = await startServer({
    [JWKS]: json({ keys: [fakeKey('k1')] }),
    '/other/jwks.json': json({ keys: [fakeKey('k2')] }),
  })
  server.route(
    BRAND,
    dynamic(() => brand),
  )
  agentUrl = `http://agent.seller.test:${server.port}/mcp`
  brand = { agents: [{ type: 'sales', id: 'sales', url: agentUrl }] }
})
afterEach(() => server.close())

const resolver = (options: Partial<BrandJsonResolverOptions> = {}) =>
  brandJsonResolver({ agentUrl, fetch: testFetch(), now: clock.now, ...options })
const webhook = () => ({ profile: 'webhook' as const, now: clock.now() })
const request = () => ({ profile: 'request' as const, now: clock.now() })

describe('brandJsonResolver', () => {
  it('finds the agent entry and uses the default jwks_uri at the agent origin', async () => {
    const keys = resolver()
    expect(await keys.resolve('k1', webhook())).toEqual({ jwk: fakeKey('k1'), signer: agentUrl })
    expect(await keys.discover()).toEqual({
      agentUrl,
      brandJsonUrl: `http://agent.seller.test:${server.port}${BRAND}`,
      jwksUri: `http://agent.seller.test:${server.port}${JWKS}`,
    })
    expect(server.hits(BRAND)).toBe(1)
  })

  it('uses the entry jwks_uri, found in house.agents or brands[].agents too', async () => {
    const entry = { type: 'sales', id: 'sales', url: agentUrl, jwks_uri: `${server.origin}/other/jwks.json` }
    for (const document of [
      { agents: [entry] },
      { house: { domain: 'seller.test', name: 'S', agents: [entry] } },
      { house: { domain: 'seller.test', name: 'S' }, brands: [{ id: 'b', names: [], agents: [entry] }] },
    ]) {
      brand = document
      const keys = resolver()
      expect(await keys.resolve('k2', request())).toEqual({ jwk: fakeKey('k2'), signer: agentUrl })
      expect(await keys.resolve('k1', request())).toBeUndefined()
    }
  })

  it('matches agents[].url byte for byte', async () => {
    brand = { agents: [{ type: 'sales', id: 'sales', url: `${agentUrl}/` }] }
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_agent_not_in_brand_json',
    )
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('webhook_signature_key_unknown')
  })

  it('refuses two entries for the agent as ambiguous', async () => {
    const entry = { type: 'sales', id: 'sales', url: agentUrl }
    brand = {
      house: { domain: 'seller.test', name: 'S', agents: [entry] },
      brands: [{ id: 'b', names: [], agents: [entry] }],
    }
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_ambiguous',
    )
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('webhook_signature_key_unknown')
  })

  it('follows one authoritative_location hop, and no second one', async () => {
    server.route('/hosted/brand.json', json({ agents: [{ type: 'sales', id: 'sales', url: agentUrl }] }))
    brand = { authoritative_location: `${server.origin}/hosted/brand.json` }
    const keys = resolver()
    expect(await keys.resolve('k1', request())).toBeDefined()
    expect((await keys.discover()).brandJsonUrl).toBe(`${server.origin}/hosted/brand.json`)
    server.route('/hosted/brand.json', json({ authoritative_location: `${server.origin}/third/brand.json` }))
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_malformed',
    )
    expect(server.hits('/third/brand.json')).toBe(0)
  })

  it('follows a house redirect to the house domain brand.json', async () => {
    brand = { house: 'holdco.test' }
    server.route(
      '/holdco/brand.json',
      json({
        house: { domain: 'holdco.test', name: 'H', agents: [{ type: 'sales', id: 's', url: agentUrl }] },
      }),
    )
    const base = testFetch()
    const fetch: SafeFetch = vi.fn((url, init) =>
      base(
        url === 'https://holdco.test/.well-known/brand.json' ? `${server.origin}/holdco/brand.json` : url,
        init,
      ),
    )
    expect(await resolver({ fetch }).resolve('k1', webhook())).toBeDefined()
    expect(fetch).toHaveBeenCalledWith('https://holdco.test/.well-known/brand.json', expect.anything())
  })

  it('refuses an HTTP redirect of brand.json as unreachable', async () => {
    server.route(BRAND, (_request, response) =>
      response.writeHead(302, { location: `${server.origin}/hosted/brand.json` }).end(),
    )
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_unreachable',
    )
    expect(server.hits('/hosted/brand.json')).toBe(0)
  })

  it.each([
    ['repeated member names', `{"agents":[],"agents":[]}`],
    ['agents not an array', '{"agents":{}}'],
    ['an array document', '[]'],
    [
      'a bad jwks_uri',
      () => JSON.stringify({ agents: [{ type: 'sales', id: 's', url: agentUrl, jwks_uri: 42 }] }),
    ],
  ])('calls a brand.json with %s malformed', async (_name, body) => {
    server.route(BRAND, json(typeof body === 'function' ? body() : body))
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_malformed',
    )
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('key_source_unavailable')
  })

  it('calls a missing or oversized brand.json unreachable', async () => {
    server.route(BRAND, json({}, {}, 404))
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_unreachable',
    )
    server.route(
      BRAND,
      json({ agents: [{ type: 'sales', id: 's', url: agentUrl, description: 'x'.repeat(2000) }] }),
    )
    expect((await failure(resolver({ maxBytes: 1000 }).resolve('k1', request()))).code).toBe(
      'request_signature_brand_json_unreachable',
    )
  })

  it('caches the discovery, and reports a jwks_uri change', async () => {
    const onJwksUriChange = vi.fn()
    const keys = resolver({ cacheSeconds: 300, onJwksUriChange })
    await keys.resolve('k1', request())
    await keys.resolve('k1', request())
    expect(server.hits(BRAND)).toBe(1)
    brand = {
      agents: [{ type: 'sales', id: 's', url: agentUrl, jwks_uri: `${server.origin}/other/jwks.json` }],
    }
    clock.advance(300)
    expect(await keys.resolve('k2', request())).toBeDefined()
    expect(onJwksUriChange).toHaveBeenCalledWith({
      previous: `http://agent.seller.test:${server.port}${JWKS}`,
      next: `${server.origin}/other/jwks.json`,
    })
  })

  it('stops trusting a cached discovery once brand.json no longer lists the agent', async () => {
    const keys = resolver({ cacheSeconds: 60 })
    await keys.resolve('k1', request())
    brand = { agents: [] }
    clock.advance(60)
    expect((await failure(keys.resolve('k1', request()))).code).toBe(
      'request_signature_agent_not_in_brand_json',
    )
  })

  describe('brand_json_url bootstrap', () => {
    it('accepts a brand.json on the agent eTLD+1', async () => {
      const keys = resolver({ brandJsonUrl: `http://brand.seller.test:${server.port}${BRAND}` })
      expect(await keys.resolve('k1', request())).toBeDefined()
      expect((await keys.discover()).binding).toEqual({
        agentSite: 'seller.test',
        brandSite: 'seller.test',
        via: 'same-site',
      })
    })

    it('refuses another site unless authorized_operators lists the agent site', async () => {
      const brandJsonUrl = `http://brands.holdco.test:${server.port}${BRAND}`
      expect((await failure(resolver({ brandJsonUrl }).resolve('k1', request()))).code).toBe(
        'request_signature_brand_origin_mismatch',
      )
      expect((await failure(resolver({ brandJsonUrl }).resolve('k1', webhook()))).code).toBe(
        'webhook_signature_key_unknown',
      )
      brand = { ...(brand as object), authorized_operators: [{ domain: 'seller.test', brands: ['*'] }] }
      const keys = resolver({ brandJsonUrl })
      expect(await keys.resolve('k1', request())).toBeDefined()
      expect((await keys.discover()).binding?.via).toBe('authorized-operator')
    })
  })
})
