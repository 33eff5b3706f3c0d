import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRegistryClient, RegistryError } from '../src/index.js'
import { API_KEY, startFakeRegistry, type FakeRegistry } from './fake-registry.js'

let registry: FakeRegistry
beforeAll(async () => {
  registry = await startFakeRegistry()
})
afterAll(() => registry.close())

const last = () => registry.requests.at(-1)!

describe('createRegistryClient', () => {
  it('resolves a brand and sends no credential when none is configured', async () => {
    const client = createRegistryClient({ baseUrl: `${registry.url}/` })
    const brand = await client.resolveBrand('acme.example')
    expect(brand).toMatchObject({
      canonical_domain: 'acme.example',
      brand_name: 'Acme',
      source: 'brand_json',
    })
    expect(last().url.searchParams.get('domain')).toBe('acme.example')
    expect(last().authorization).toBeUndefined()
  })

  it('sends an API key, a token or a token from getToken as a bearer credential', async () => {
    await createRegistryClient({ baseUrl: registry.url, apiKey: API_KEY }).resolveBrand('acme.example')
    expect(last().authorization).toBe(`Bearer ${API_KEY}`)
    await createRegistryClient({ baseUrl: registry.url, token: 'eyJ.a.b' }).resolveBrand('acme.example')
    expect(last().authorization).toBe('Bearer eyJ.a.b')
    let calls = 0
    const client = createRegistryClient({ baseUrl: registry.url, getToken: async () => `tok${++calls}` })
    await client.resolveBrand('acme.example')
    await client.resolveBrand('acme.example')
    expect(last().authorization).toBe('Bearer tok2')
  })

  it('uses an injected fetch', async () => {
    const seen: string[] = []
    const client = createRegistryClient({
      baseUrl: registry.url,
      fetch: (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname}`)
        return fetch(request)
      },
    })
    await client.resolveBrands(['acme.example'])
    await client.findBrands('acme')
    expect(seen).toEqual(['POST /api/brands/resolve/bulk', 'GET /api/brands/find'])
  })

  it('rejects ambiguous credentials and a bad base URL', () => {
    expect(() => createRegistryClient({ baseUrl: registry.url, apiKey: 'sk_a', token: 't' })).toThrow(
      TypeError,
    )
    expect(() => createRegistryClient({ baseUrl: 'not a url' })).toThrow(/baseUrl is not a URL/)
  })

  it('resolves in bulk with null for unknown domains', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const { results } = await client.resolveBrands(['acme.example', 'nobody.example'])
    expect(results['acme.example']).toMatchObject({ brand_name: 'Acme' })
    expect(results['nobody.example']).toBeNull()
    expect(last().body).toEqual({ domains: ['acme.example', 'nobody.example'] })
  })

  it('reads the flat brands/find shape', async () => {
    const { results } = await createRegistryClient({ baseUrl: registry.url }).findBrands('acme', { limit: 5 })
    expect(results[0]).toMatchObject({ domain: 'acme.example', brand_name: 'Acme' })
    expect(last().url.search).toBe('?q=acme&limit=5')
  })

  it('sends the AdCP selector shape to expand and to product checks', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const selectors = [
      { publisher_domain: 'news.example', selection_type: 'by_tag' as const, property_tags: ['news'] },
      { publisher_domain: 'news.example', selection_type: 'all' as const },
    ]
    const expanded = await client.expandProductIdentifiers({
      agent_url: 'https://sales.example/mcp',
      publisher_properties: selectors,
    })
    expect(last().body).toEqual({ agent_url: 'https://sales.example/mcp', publisher_properties: selectors })
    expect(expanded.properties[0]?.identifiers).toEqual([{ type: 'domain', value: 'news.example' }])
    expect(expanded.identifier_count).toBe(1)
  })

  it('answers authorization checks true and false', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const query = { identifier_type: 'domain', identifier_value: 'news.example' }
    expect(
      await client.checkPropertyAuthorization({ agent_url: 'https://sales.example/mcp', ...query }),
    ).toMatchObject({
      authorized: true,
    })
    expect(
      await client.checkPropertyAuthorization({ agent_url: 'https://other.example/mcp', ...query }),
    ).toMatchObject({
      authorized: false,
    })
  })

  it('sets up a hosted brand and runs the hosted-domain claim and verification', async () => {
    const client = createRegistryClient({ baseUrl: registry.url, apiKey: API_KEY })
    const brand = await client.setupMyBrand({ domain: 'mine.example', brand_name: 'Mine' })
    expect(last()).toMatchObject({
      method: 'POST',
      authorization: `Bearer ${API_KEY}`,
      body: { domain: 'mine.example', brand_name: 'Mine' },
    })
    expect(JSON.parse(brand.pointer_snippet)).toEqual({ authoritative_location: brand.hosted_brand_json_url })
    await expect(client.setupMyBrand({ domain: 'theirs.example', brand_name: 'X' })).rejects.toMatchObject({
      status: 403,
      code: 'domain_not_owned',
    })
    const claim = await client.claimHostedPropertyDomain('mine.example')
    expect(last().url.pathname).toBe('/api/properties/hosted/mine.example/claim')
    expect(new URL(claim.authoritative_location).searchParams.get('adcp_claim')).toBe('tok')
    const locked = await client.claimHostedPropertyDomain('taken.example').catch((e: unknown) => e)
    expect(locked).toBeInstanceOf(RegistryError)
    expect(locked).toMatchObject({ status: 409, code: 'domain_locked' })
    const verified = await client.verifyHostedPropertyOrigin('mine.example')
    expect(last()).toMatchObject({ method: 'POST', authorization: `Bearer ${API_KEY}` })
    expect(verified).toMatchObject({
      verified: true,
      reason: 'authoritative_location_pointer',
      bound_org_id: 'org_mine',
    })
    await expect(
      createRegistryClient({ baseUrl: registry.url }).claimHostedPropertyDomain('mine.example'),
    ).rejects.toMatchObject({ status: 401 })
  })

  it('looks up a publisher, with and without placements', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const plain = await client.lookupPublisher('news.example')
    expect(last().url.search).toBe('?domain=news.example')
    expect(plain).toMatchObject({ domain: 'news.example', hosting: { mode: 'self' } })
    expect(plain.placements).toBeUndefined()
    const withPlacements = await client.lookupPublisher('news.example', { include: 'placements' })
    expect(last().url.searchParams.get('include')).toBe('placements')
    expect(withPlacements.placements).toEqual([])
  })

  it('throws RegistryError with status, code and message for each error body', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const notFound = await client.resolveBrand('nobody.example').catch((e: unknown) => e)
    expect(notFound).toBeInstanceOf(RegistryError)
    expect(notFound).toMatchObject({ status: 404, code: 'not_found', message: 'no brand for nobody.example' })
    // The hosted registry's `{ error: "message" }` body.
    const invalid = await client.resolveBrand('BAD DOMAIN').catch((e: unknown) => e)
    expect(invalid).toMatchObject({ status: 400, code: 'bad_request', message: 'Invalid domain format' })
    // A non-JSON body.
    const gateway = await client.getStats().catch((e: unknown) => e)
    expect(gateway).toMatchObject({ status: 502, code: 'bad_gateway', message: 'upstream is down' })
    const viaRequest = await client.request('GET', '/api/registry/stats').catch((e: unknown) => e)
    expect(viaRequest).toMatchObject({ status: 502, code: 'bad_gateway' })
  })

  it('turns an unreachable registry into a network_error', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const client = createRegistryClient({ baseUrl: `http://127.0.0.1:${port}` })
    const failure = await client.resolveBrand('acme.example').catch((e: unknown) => e)
    expect(failure).toMatchObject({ status: 0, code: 'network_error' })
    expect((failure as Error).message).toMatch(/could not reach the registry/)
  })

  it('offers the typed openapi-fetch client and a generic request', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const { data, response } = await client.raw.GET('/api/brands/resolve', {
      params: { query: { domain: 'acme.example' } },
    })
    expect(response.status).toBe(200)
    expect(data?.brand_name).toBe('Acme')
    const generic = await client.request<{ brand_name: string }>('GET', '/api/brands/resolve', {
      query: { domain: 'acme.example' },
    })
    expect(generic.brand_name).toBe('Acme')
  })
})
