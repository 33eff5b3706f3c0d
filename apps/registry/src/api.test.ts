/**
 * The registry end to end, on SQLite and on PostgreSQL: real publisher and brand sites on 127.0.0.1, the
 * service on port 0, every response checked against the OpenAPI document (see `api` in testing/registry.ts).
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authorize, REDIRECT_URI, token, type AuthServer } from './testing/auth-server.js'
import {
  api,
  readSse,
  startSite,
  startTestRegistry,
  type Backend,
  type Site,
  type TestRegistry,
} from './testing/registry.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

const AGENT_A = 'https://sales.alpha.test/mcp'
const AGENT_B = 'https://sales.beta.test/mcp'
const AGENT_C = 'https://sales.gamma.test/mcp'

const adagents = (agents: object[]) => ({
  $schema: 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json',
  properties: [
    {
      property_id: 'home',
      property_type: 'website',
      name: 'Pub One',
      identifiers: [{ type: 'domain', value: 'pub-one.test' }],
      tags: ['news'],
    },
    {
      property_id: 'sport',
      property_type: 'website',
      name: 'Pub One Sport',
      identifiers: [{ type: 'domain', value: 'sport.pub-one.test' }],
      tags: ['sports'],
    },
    {
      property_id: 'app',
      property_type: 'mobile_app',
      name: 'Pub One app',
      identifiers: [{ type: 'bundle_id', value: 'test.pubone.app' }],
      tags: ['news'],
    },
  ],
  authorized_agents: agents,
  last_updated: '2026-06-01T00:00:00Z',
})

const FIRST = adagents([
  {
    url: AGENT_A,
    authorized_for: 'everything',
    authorization_type: 'property_tags',
    property_tags: ['news', 'sports'],
  },
  {
    url: AGENT_B,
    authorized_for: 'the home page',
    authorization_type: 'property_ids',
    property_ids: ['home'],
  },
])
const SECOND = adagents([
  {
    url: AGENT_A,
    authorized_for: 'everything',
    authorization_type: 'property_tags',
    property_tags: ['news', 'sports'],
  },
  { url: AGENT_C, authorized_for: 'sport only', authorization_type: 'property_ids', property_ids: ['sport'] },
])

const PUB_TWO = {
  $schema: 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json',
  properties: [
    {
      property_id: 'front',
      property_type: 'website',
      name: 'Pub Two',
      identifiers: [{ type: 'domain', value: 'pub-two.test' }],
      tags: ['news'],
    },
  ],
  authorized_agents: [
    {
      url: AGENT_A,
      authorized_for: 'front page',
      authorization_type: 'property_ids',
      property_ids: ['front'],
    },
  ],
  last_updated: '2026-06-01T00:00:00Z',
}

const BRAND_JSON = {
  house: { domain: 'brand-one.test', name: 'Brand One Holdings' },
  brands: [
    { id: 'brand_one', names: [{ en: 'Brand One' }], keller_type: 'master', url: 'https://brand-one.test' },
  ],
  last_updated: '2026-06-01T00:00:00Z',
}

describe.each(backends)('registry API on %s', (name, backend) => {
  let test: TestRegistry
  let publisher: Site
  let publisherTwo: Site
  let huge: Site
  let broken: Site
  let brand: Site
  let apiKey: string
  const registry = () => test.registry

  beforeAll(async () => {
    if (!backend) return
    ;[publisher, publisherTwo, huge, broken, brand] = await Promise.all([
      startSite(),
      startSite(),
      startSite(),
      startSite(),
      startSite(),
    ])
    publisher.serveJson('/.well-known/adagents.json', FIRST)
    publisherTwo.serveJson('/.well-known/adagents.json', PUB_TWO)
    // Valid JSON just over the 1 MiB crawl cap (CRAWL_MAX_BYTES).
    huge.serveJson('/.well-known/adagents.json', { ...PUB_TWO, padding: 'x'.repeat(1024 * 1024) })
    broken.serveJson('/.well-known/adagents.json', {
      authorized_agents: [{ url: 'not a url', authorization_type: 'property_ids' }],
    })
    brand.serveJson('/.well-known/brand.json', BRAND_JSON)
    test = await startTestRegistry(backend, {
      origins: {
        'pub-one.test': publisher.origin,
        'pub-two.test': publisherTwo.origin,
        'pub-huge.test': huge.origin,
        'pub-broken.test': broken.origin,
        'brand-one.test': brand.origin,
        'nothing.test': broken.origin,
      },
    })
    apiKey = (await registry().createOrg('Test buyer')).apiKey
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await Promise.all([publisher, publisherTwo, huge, broken, brand].map((site) => site?.close()))
  })

  it.skipIf(!backend)(`listens on 127.0.0.1 when HOST is unset (${name})`, () => {
    expect(registry().listener.address).toBe('127.0.0.1')
    expect(registry().listener.boundUrl).toBe(registry().url)
  })

  it.skipIf(!backend)(`resolves seeded and crawled brands, single and bulk (${name})`, async () => {
    const seeded = await api(registry(), 'resolveBrand', '/api/brands/resolve?domain=acme-outdoor.example')
    expect(seeded).toMatchObject({ status: 200, body: { brand_name: 'Acme Outdoor', source: 'hosted' } })
    const crawled = await api(registry(), 'resolveBrand', '/api/brands/resolve?domain=brand-one.test')
    expect(crawled).toMatchObject({
      status: 200,
      body: { brand_name: 'Brand One', source: 'brand_json', house_domain: 'brand-one.test' },
    })
    const missing = await api(registry(), 'resolveBrand', '/api/brands/resolve?domain=nothing.test')
    expect(missing).toMatchObject({
      status: 404,
      body: { error: 'brand_not_found', domain: 'nothing.test', file_status: 404 },
    })
    expect((await api(registry(), 'resolveBrand', '/api/brands/resolve?domain=not_a_domain')).status).toBe(
      400,
    )
    const bulk = await api(registry(), 'resolveBrandsBulk', '/api/brands/resolve/bulk', {
      body: { domains: ['acme-outdoor.example', 'brand-one.test', 'nothing.test'] },
    })
    expect(bulk.body.results['acme-outdoor.example'].brand_name).toBe('Acme Outdoor')
    expect(bulk.body.results['brand-one.test'].source).toBe('brand_json')
    expect(bulk.body.results['nothing.test']).toBeNull()
    expect(
      (
        await api(registry(), 'resolveBrandsBulk', '/api/brands/resolve/bulk', {
          body: { domains: Array(26).fill('a.example') },
        })
      ).status,
    ).toBe(400)
    const found = await api(registry(), 'findBrand', '/api/brands/find?q=acme')
    expect(found.body.results.map((result: { domain: string }) => result.domain)).toContain(
      'acme-outdoor.example',
    )
    const history = await api(registry(), 'getBrandHistory', '/api/brands/history?domain=brand-one.test')
    expect(history.body.total).toBe(1)
  })

  it.skipIf(!backend)(
    `resolves a publisher by crawling it, and answers authorization true and false (${name})`,
    async () => {
      const resolved = await api(registry(), 'resolveProperty', '/api/properties/resolve?domain=pub-one.test')
      expect(resolved.status).toBe(200)
      expect(resolved.body).toMatchObject({
        publisher_domain: 'pub-one.test',
        source: 'adagents_json',
        verified: true,
      })
      expect(resolved.body.authorized_agents.map((agent: { url: string }) => agent.url).sort()).toEqual([
        AGENT_A,
        AGENT_B,
      ])
      const bulk = await api(registry(), 'resolvePropertiesBulk', '/api/properties/resolve/bulk', {
        body: { domains: ['pub-one.test', 'pinecrest-news.example', 'nothing.test'] },
      })
      expect(bulk.body.results['pinecrest-news.example'].properties).toHaveLength(3)
      expect(bulk.body.results['nothing.test']).toBeNull()

      const check = (agent: string, type: string, value: string) =>
        api(
          registry(),
          'validatePropertyAuthorization',
          `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(agent)}&identifier_type=${type}&identifier_value=${value}`,
        )
      expect((await check(AGENT_B, 'domain', 'pub-one.test')).body.authorized).toBe(true)
      expect((await check(AGENT_B, 'domain', 'sport.pub-one.test')).body.authorized).toBe(false)
      expect((await check(`${AGENT_A}/`, 'domain', 'SPORT.pub-one.test')).body.authorized).toBe(true)
      expect((await check(AGENT_C, 'domain', 'pub-one.test')).body.authorized).toBe(false)
      expect(
        (
          await api(
            registry(),
            'validatePropertyAuthorization',
            '/api/registry/validate/property-authorization?agent_url=x',
          )
        ).status,
      ).toBe(400)

      const lookup = await api(
        registry(),
        'lookupProperty',
        '/api/registry/lookup/property?type=domain&value=pub-one.test',
      )
      expect(lookup.body.agents.map((agent: { agent_url: string }) => agent.agent_url).sort()).toEqual([
        AGENT_A,
        AGENT_B,
      ])
      const domains = await api(
        registry(),
        'getAgentDomains',
        `/api/registry/lookup/agent/${encodeURIComponent(AGENT_B)}/domains`,
      )
      expect(domains.body.domains).toEqual(['pub-one.test'])
      const rollup = await api(
        registry(),
        'lookupPublisherAgentAuthorization',
        `/api/registry/publisher/authorization?domain=pub-one.test&agent=${encodeURIComponent(AGENT_B)}`,
      )
      expect(rollup.body).toMatchObject({ authorized: 1, total: 3, publisher_wide: false })
    },
  )

  it.skipIf(!backend)(`expands selectors of both shapes (${name})`, async () => {
    const expand = (publisher_properties: object[], agent = AGENT_A) =>
      api(registry(), 'expandProductIdentifiers', '/api/registry/expand/product-identifiers', {
        body: { agent_url: agent, publisher_properties },
      })
    const all = await expand([{ publisher_domain: 'pub-one.test', selection_type: 'all' }])
    expect(all.body.property_count).toBe(3)
    expect(all.body.identifiers).toContainEqual({
      type: 'bundle_id',
      value: 'test.pubone.app',
      property_id: 'app',
      publisher_domain: 'pub-one.test',
    })
    expect(
      (
        await expand([
          { publisher_domain: 'pub-one.test', selection_type: 'by_tag', property_tags: ['sports'] },
        ])
      ).body.properties.map((p: { property_id: string }) => p.property_id),
    ).toEqual(['sport'])
    expect(
      (await expand([{ publisher_domain: 'pub-one.test', selection_type: 'by_id', property_ids: [] }])).body
        .property_count,
    ).toBe(0)
    const documented = await expand([{ publisher_domain: 'pub-one.test', property_types: ['mobile_app'] }])
    expect(documented.body.properties.map((p: { property_id: string }) => p.property_id)).toEqual(['app'])
    expect(
      (await expand([{ publisher_domain: 'pub-one.test', selection_type: 'all' }], AGENT_B)).body
        .property_count,
    ).toBe(1)

    // Without publisher_domain (service spec: not required) a selector addresses every publisher whose
    // adagents.json authorizes the agent; publisher_domains fans out over the listed ones.
    expect(
      (await api(registry(), 'resolveProperty', '/api/properties/resolve?domain=pub-two.test')).status,
    ).toBe(200)
    const keys = (result: {
      body: { properties: Array<{ publisher_domain: string; property_id: string }> }
    }) => result.body.properties.map((p) => `${p.publisher_domain}/${p.property_id}`).sort()
    const everywhere = await expand([{ selection_type: 'all' }])
    expect(everywhere.status).toBe(200)
    expect(keys(everywhere)).toEqual([
      'pub-one.test/app',
      'pub-one.test/home',
      'pub-one.test/sport',
      'pub-two.test/front',
    ])
    expect(everywhere.body.identifiers).toContainEqual({
      type: 'domain',
      value: 'pub-two.test',
      property_id: 'front',
      publisher_domain: 'pub-two.test',
    })
    expect(keys(await expand([{ property_types: ['website'], tags: ['news'] }]))).toEqual([
      'pub-one.test/home',
      'pub-two.test/front',
    ])
    expect(keys(await expand([{ selection_type: 'by_tag', property_tags: ['news'] }]))).toEqual([
      'pub-one.test/app',
      'pub-one.test/home',
      'pub-two.test/front',
    ])
    expect(
      keys(await expand([{ publisher_domains: ['pub-two.test', 'pub-one.test'], selection_type: 'all' }])),
    ).toEqual(keys(everywhere))
    expect(keys(await expand([{ selection_type: 'all' }], AGENT_B))).toEqual(['pub-one.test/home'])
    expect(
      (await expand([{ selection_type: 'all' }], 'https://unknown-agent.test/mcp')).body.property_count,
    ).toBe(0)
    for (const bad of [
      { selection_type: 'by_id', property_ids: ['home'] },
      { publisher_domains: ['pub-one.test'], selection_type: 'by_id', property_ids: ['home'] },
      { publisher_domain: 'pub-one.test', publisher_domains: ['pub-two.test'], selection_type: 'all' },
      { publisher_domains: ['not a domain'], selection_type: 'all' },
    ]) {
      expect(await expand([bad])).toMatchObject({
        status: 400,
        body: { error: 'invalid_selector' },
      })
    }
    const productEverywhere = (agent: string, selector: object) =>
      api(registry(), 'validateProductAuthorization', '/api/registry/validate/product-authorization', {
        body: { agent_url: agent, publisher_properties: [selector] },
      })
    expect((await productEverywhere(AGENT_B, { property_ids: ['home'] })).body).toMatchObject({
      authorized: true,
      publishers: [{ publisher_domain: 'pub-one.test', authorized_all: true }],
    })
    expect(
      (await productEverywhere(AGENT_B, { selection_type: 'by_tag', property_tags: ['news'] })).body,
    ).toMatchObject({ authorized: false, publishers: [{ unauthorized_property_ids: ['app'] }] })
    expect(
      (await productEverywhere(AGENT_A, { selection_type: 'all' })).body.publishers.map(
        (detail: { publisher_domain: string; authorized_all: boolean }) =>
          `${detail.publisher_domain} ${detail.authorized_all}`,
      ),
    ).toEqual(['pub-one.test true', 'pub-two.test true'])

    const missing = await api(
      registry(),
      'expandProductIdentifiers',
      '/api/registry/expand/product-identifiers',
      { body: { publisher_properties: [] } },
    )
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
    const product = await api(
      registry(),
      'validateProductAuthorization',
      '/api/registry/validate/product-authorization',
      {
        body: {
          agent_url: AGENT_B,
          publisher_properties: [
            { publisher_domain: 'pub-one.test', selection_type: 'by_id', property_ids: ['home'] },
          ],
        },
      },
    )
    expect(product.body.authorized).toBe(true)
    const wider = await api(
      registry(),
      'validateProductAuthorization',
      '/api/registry/validate/product-authorization',
      {
        body: {
          agent_url: AGENT_B,
          publisher_properties: [{ publisher_domain: 'pub-one.test', selection_type: 'all' }],
        },
      },
    )
    expect(wider.body.authorized).toBe(false)
  })

  it.skipIf(!backend)(
    `ignores authorized_agents on /api/properties/save: no authorization is granted (${name})`,
    async () => {
      const domain = 'community-pub.test'
      const saved = await api(registry(), 'saveProperty', '/api/properties/save', {
        token: apiKey,
        body: {
          publisher_domain: domain,
          authorized_agents: [{ url: AGENT_C, authorized_for: 'everything' }],
          properties: [{ type: 'website', name: 'Community Pub' }],
        },
      })
      expect(saved.status).toBe(200)
      expect(saved.body.message).toMatch(/^Property created; authorized_agents ignored/)
      const property = await api(
        registry(),
        'validatePropertyAuthorization',
        `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(AGENT_C)}&identifier_type=domain&identifier_value=${domain}`,
      )
      expect(property.body.authorized).toBe(false)
      const product = await api(
        registry(),
        'validateProductAuthorization',
        '/api/registry/validate/product-authorization',
        {
          body: {
            agent_url: AGENT_C,
            publisher_properties: [{ publisher_domain: domain, selection_type: 'all' }],
          },
        },
      )
      expect(product.body).toMatchObject({
        authorized: false,
        publishers: [{ publisher_domain: domain, requested: 1, authorized: 0 }],
      })
      const expanded = await api(
        registry(),
        'expandProductIdentifiers',
        '/api/registry/expand/product-identifiers',
        {
          body: {
            agent_url: AGENT_C,
            publisher_properties: [{ publisher_domain: domain, selection_type: 'all' }],
          },
        },
      )
      expect(expanded.body.property_count).toBe(0)
      const resolved = await api(registry(), 'resolveProperty', `/api/properties/resolve?domain=${domain}`)
      expect(resolved.body).toMatchObject({ publisher_domain: domain, verified: false })
      expect(resolved.body.authorized_agents ?? []).toEqual([])
      expect(
        (
          await api(
            registry(),
            'getAgentDomains',
            `/api/registry/lookup/agent/${encodeURIComponent(AGENT_C)}/domains`,
          )
        ).body.domains,
      ).not.toContain(domain)
      const plain = await api(registry(), 'saveProperty', '/api/properties/save', {
        token: apiKey,
        body: { publisher_domain: domain, authorized_agents: [] },
      })
      expect(plain.body.message).toBe('Property updated')
    },
  )

  it.skipIf(!backend)(
    `validates a good and a broken adagents.json, and generates one (${name})`,
    async () => {
      const good = await api(registry(), 'validateAdagents', '/api/adagents/validate', {
        body: { domain: 'pub-one.test' },
      })
      expect(good.body.data).toMatchObject({
        domain: 'pub-one.test',
        found: true,
        validation: { valid: true, errors: [] },
      })
      const bad = await api(registry(), 'validateAdagents', '/api/adagents/validate', {
        body: { domain: 'pub-broken.test' },
      })
      expect(bad.body.data.validation.valid).toBe(false)
      expect(bad.body.data.validation.errors.length).toBeGreaterThan(0)
      // Over the size cap: refused (not a transient failure), nothing stored, no authorization.
      const oversized = await api(registry(), 'validateAdagents', '/api/adagents/validate', {
        body: { domain: 'pub-huge.test' },
      })
      expect(oversized.body.data).toMatchObject({ found: false, validation: { valid: false } })
      expect(JSON.stringify(oversized.body.data.validation.errors)).toContain('exceeds')
      expect(
        (await api(registry(), 'resolveProperty', '/api/properties/resolve?domain=pub-huge.test')).status,
      ).toBe(404)
      expect(
        (
          await api(
            registry(),
            'validatePropertyAuthorization',
            `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(AGENT_A)}&identifier_type=domain&identifier_value=pub-huge.test`,
          )
        ).body.authorized,
      ).toBe(false)
      const missing = await api(
        registry(),
        'validateProperty',
        '/api/properties/validate?domain=brand-one.test',
      )
      expect(missing.body).toMatchObject({ valid: false, status_code: 404 })
      expect((await api(registry(), 'validateAdagents', '/api/adagents/validate', { body: {} })).status).toBe(
        400,
      )
      expect(
        (await api(registry(), 'validateAdagents', '/api/adagents/validate', { body: '{"domain":' })).status,
      ).toBe(400)
      const created = await api(registry(), 'createAdagents', '/api/adagents/create', {
        body: {
          authorized_agents: [
            {
              url: AGENT_A,
              authorized_for: 'all',
              authorization_type: 'property_ids',
              property_ids: ['home'],
            },
          ],
          properties: FIRST.properties,
        },
      })
      expect(created.status).toBe(200)
      expect(JSON.parse(created.body.data.adagents_json).authorized_agents[0].url).toBe(AGENT_A)
      const refused = await api(registry(), 'createAdagents', '/api/adagents/create', {
        body: {
          authorized_agents: [{ url: AGENT_A, authorization_type: 'property_ids', property_ids: ['nope'] }],
        },
      })
      expect(refused.status).toBe(400)
    },
  )

  it.skipIf(!backend)(
    `locks the member endpoints: 401 without or with a bad key, 403 outside the org (${name})`,
    async () => {
      expect((await api(registry(), 'getRegistryFeed', '/api/registry/feed')).status).toBe(401)
      const bad = await api(registry(), 'getRegistryFeed', '/api/registry/feed', {
        token: 'sk_not_a_real_key_at_all',
      })
      expect(bad.status).toBe(401)
      expect(bad.headers.get('www-authenticate')).toContain('oauth-protected-resource/api')
      expect(
        (await api(registry(), 'listMemberAgents', '/api/me/agents?org=org_someone_else', { token: apiKey }))
          .status,
      ).toBe(403)
      expect(
        (
          await api(
            registry(),
            'getAgentAuthorizations',
            `/api/registry/authorizations?agent_url=${AGENT_A}&include=raw`,
            { token: apiKey },
          )
        ).status,
      ).toBe(403)
      expect(
        (
          await api(registry(), 'requestCrawl', '/api/registry/crawl-request', {
            body: { domain: 'pub-one.test' },
          })
        ).status,
      ).toBe(401)
    },
  )

  it.skipIf(!backend)(`onboards an organization and manages its member agents (${name})`, async () => {
    const created = await api(registry(), 'createOrganization', '/api/organizations', {
      token: apiKey,
      body: { organization_name: 'Test buyer', company_type: 'agency' },
    })
    expect(created.status).toBe(201)
    expect(
      (
        await api(registry(), 'createOrganization', '/api/organizations', {
          token: apiKey,
          body: { organization_name: 'Again' },
        })
      ).status,
    ).toBe(409)
    const agent = 'https://buyer.test/mcp'
    const first = await api(registry(), 'registerMemberAgent', '/api/me/agents', {
      token: apiKey,
      body: { url: agent, type: 'buying', visibility: 'public' },
    })
    expect(first.status).toBe(201)
    // The organization existed already; the member profile did not.
    expect(first.body).toMatchObject({ profile_auto_created: true, agent: { visibility: 'public' } })
    expect(first.body).not.toHaveProperty('org_auto_created')
    expect(first.body).not.toHaveProperty('warnings')
    expect(
      (
        await api(registry(), 'registerMemberAgent', '/api/me/agents', {
          token: apiKey,
          body: { url: agent, type: 'buying', name: 'Buyer' },
        })
      ).status,
    ).toBe(200)
    const listed = await api(registry(), 'listMemberAgents', '/api/me/agents', { token: apiKey })
    expect(listed.body.agents).toEqual([{ url: agent, type: 'buying', visibility: 'public', name: 'Buyer' }])
    const path = `/api/me/agents/${encodeURIComponent(agent)}`
    expect(
      (await api(registry(), 'removeMemberAgent', path, { method: 'DELETE', token: apiKey })).status,
    ).toBe(409)
    expect(
      (
        await api(registry(), 'updateMemberAgent', path, {
          method: 'PATCH',
          token: apiKey,
          body: { url: 'https://other.test' },
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api(registry(), 'updateMemberAgent', path, {
          method: 'PATCH',
          token: apiKey,
          body: { visibility: 'private' },
        })
      ).body.agent.visibility,
    ).toBe('private')
    expect(
      (await api(registry(), 'removeMemberAgent', path, { method: 'DELETE', token: apiKey })).status,
    ).toBe(204)
    expect(
      (await api(registry(), 'listMemberAgents', '/api/me/agents', { token: apiKey })).body.agents,
    ).toEqual([])
  })

  it.skipIf(!backend)(
    `auto-creates the organization and the member profile for a fresh API key's first agent (${name})`,
    async () => {
      const fresh = await registry().createOrg('Fresh Agency')
      const register = (body: object) =>
        api(registry(), 'registerMemberAgent', '/api/me/agents', { token: fresh.apiKey, body })
      const first = await register({ url: 'https://fresh.test/mcp', type: 'sales', visibility: 'public' })
      expect(first.status).toBe(201)
      expect(first.body).toEqual({
        agent: { url: 'https://fresh.test/mcp', type: 'sales', visibility: 'public' },
        org_auto_created: true,
        profile_auto_created: true,
      })
      expect(await registry().repository.members.getOrgProfile(fresh.id)).toMatchObject({
        name: 'Fresh Agency',
        is_personal: false,
      })
      expect(await registry().repository.members.getMemberProfile(fresh.id)).toMatchObject({
        display_name: 'Fresh Agency',
        is_public: false,
      })
      // Update in place, then a second agent: nothing is bootstrapped again.
      const again = await register({ url: 'https://fresh.test/mcp', type: 'sales', name: 'Fresh' })
      expect(again.status).toBe(200)
      expect(again.body).toEqual({
        agent: { url: 'https://fresh.test/mcp', type: 'sales', visibility: 'public', name: 'Fresh' },
      })
      const second = await register({ url: 'https://fresh.test/a2a', type: 'creative' })
      expect(second.status).toBe(201)
      expect(second.body).toEqual({
        agent: { url: 'https://fresh.test/a2a', type: 'creative', visibility: 'private' },
      })
      // Removing every agent keeps the profile: the next registration creates nothing.
      for (const url of ['https://fresh.test/mcp', 'https://fresh.test/a2a']) {
        const path = `/api/me/agents/${encodeURIComponent(url)}`
        await api(registry(), 'updateMemberAgent', path, {
          method: 'PATCH',
          token: fresh.apiKey,
          body: { visibility: 'private' },
        })
        expect(
          (await api(registry(), 'removeMemberAgent', path, { method: 'DELETE', token: fresh.apiKey }))
            .status,
        ).toBe(204)
      }
      const back = await register({ url: 'https://fresh.test/mcp', type: 'sales' })
      expect(back.status).toBe(201)
      expect(back.body).not.toHaveProperty('profile_auto_created')
      // The explicit onboarding call now finds the auto-created organization.
      const explicit = await api(registry(), 'createOrganization', '/api/organizations', {
        token: fresh.apiKey,
        body: { organization_name: 'Fresh Agency Ltd' },
      })
      expect(explicit).toMatchObject({
        status: 409,
        body: { existing_org_id: fresh.id, existing_org_name: 'Fresh Agency' },
      })
    },
  )

  it.skipIf(!backend)(
    `auto-creates both for a user token whose organization was never onboarded (${name})`,
    async () => {
      const fresh = await registry().createOrg('Token Shop')
      const server = { url: registry().url } as AuthServer
      const { clientId, code, verifier } = await authorize(server, fresh.apiKey, 'dev@token-shop.test')
      const issued = await token(registry().url, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      })
      expect(issued.status).toBe(200)
      const userToken = issued.body.access_token as string
      expect(userToken.split('.')).toHaveLength(3)
      const registered = await api(registry(), 'registerMemberAgent', '/api/me/agents', {
        token: userToken,
        body: { url: 'https://token-shop.test/mcp', type: 'buying' },
      })
      expect(registered.status).toBe(201)
      expect(registered.body).toMatchObject({ org_auto_created: true, profile_auto_created: true })
      expect((await registry().repository.members.getOrgProfile(fresh.id))?.name).toBe('Token Shop')
      const listed = await api(registry(), 'listMemberAgents', '/api/me/agents', { token: fresh.apiKey })
      expect(listed.body.agents).toEqual([
        { url: 'https://token-shop.test/mcp', type: 'buying', visibility: 'private' },
      ])
    },
  )

  it.skipIf(!backend)(
    `follows the feed across a crawl that changes an authorization, by pull and by SSE (${name})`,
    async () => {
      await api(registry(), 'resolveProperty', '/api/properties/resolve?domain=pub-one.test')
      const page = await api(registry(), 'getRegistryFeed', '/api/registry/feed?limit=10000', {
        token: apiKey,
      })
      expect(page.status).toBe(200)
      expect(page.body.events.map((event: { event_type: string }) => event.event_type)).toContain(
        'publisher.adagents_discovered',
      )
      const cursor: string = page.body.cursor
      expect(cursor).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
      const ids = page.body.events.map((event: { event_id: string }) => event.event_id)
      expect([...ids].sort()).toEqual(ids)

      const empty = await api(registry(), 'getRegistryFeed', `/api/registry/feed?cursor=${cursor}`, {
        token: apiKey,
      })
      expect(empty.body).toMatchObject({ events: [], cursor, has_more: false })

      const stream = readSse(
        `${registry().url}/api/registry/feed/stream?cursor=${cursor}&types=authorization.*`,
        apiKey,
        2,
        8000,
      )
      await new Promise((resolve) => setTimeout(resolve, 200))
      publisher.serveJson('/.well-known/adagents.json', SECOND)
      const crawl = await api(registry(), 'requestCrawl', '/api/registry/crawl-request', {
        token: apiKey,
        body: { domain: 'pub-one.test' },
      })
      expect(crawl.status).toBe(202)
      await registry().crawlsIdle()
      const status = await api(
        registry(),
        'getCrawlRequest',
        `/api/registry/crawl-request/${crawl.body.crawl_request_id}`,
        { token: apiKey },
      )
      expect(status.body).toMatchObject({ status: 'completed', attempts: 1 })

      const after = await api(
        registry(),
        'getRegistryFeed',
        `/api/registry/feed?cursor=${cursor}&types=authorization.*`,
        { token: apiKey },
      )
      const changes = after.body.events.map(
        (event: { event_type: string; payload: { agent_url: string } }) =>
          `${event.event_type} ${event.payload.agent_url}`,
      )
      expect(changes.sort()).toEqual([`authorization.granted ${AGENT_C}`, `authorization.revoked ${AGENT_B}`])
      expect(after.body.cursor).toBe(after.body.events.at(-1).event_id)
      const all = await api(
        registry(),
        'getRegistryFeed',
        `/api/registry/feed?cursor=${cursor}&types=publisher.adagents_changed,agent.*`,
        { token: apiKey },
      )
      expect(all.body.events.map((event: { event_type: string }) => event.event_type).sort()).toEqual([
        'agent.discovered',
        'agent.removed',
        'publisher.adagents_changed',
      ])

      const events = await stream
      expect(events[0]).toMatchObject({ event: 'heartbeat', id: cursor })
      const feed = events.find((event) => event.event === 'feed')!
      expect(feed).toBeDefined()
      const data = feed.data as { cursor: string; events: Array<{ event_type: string }> }
      expect(feed.id).toBe(data.cursor)
      expect(data.events.map((event) => event.event_type).sort()).toEqual([
        'authorization.granted',
        'authorization.revoked',
      ])

      const check = await api(
        registry(),
        'validatePropertyAuthorization',
        `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(AGENT_B)}&identifier_type=domain&identifier_value=pub-one.test`,
      )
      expect(check.body.authorized).toBe(false)
      const authorizations = await api(
        registry(),
        'getAgentAuthorizations',
        `/api/registry/authorizations?agent_url=${encodeURIComponent(AGENT_C)}`,
        { token: apiKey },
      )
      expect(
        authorizations.body.rows.map((row: { property_id_slug: string }) => row.property_id_slug),
      ).toEqual(['sport'])
    },
  )

  it.skipIf(!backend)(
    `refuses bad cursors: 410 unknown, 400 malformed, 400 bad type filter (${name})`,
    async () => {
      const unknown = await api(
        registry(),
        'getRegistryFeed',
        '/api/registry/feed?cursor=01890000-0000-7000-8000-000000000000',
        { token: apiKey },
      )
      expect(unknown).toMatchObject({ status: 410, body: { error: 'cursor_expired' } })
      expect(
        (await api(registry(), 'getRegistryFeed', '/api/registry/feed?cursor=abc', { token: apiKey })).status,
      ).toBe(400)
      expect(
        (await api(registry(), 'getRegistryFeed', '/api/registry/feed?types=prop*erty', { token: apiKey }))
          .status,
      ).toBe(400)
      const stream = await fetch(
        `${registry().url}/api/registry/feed/stream?cursor=01890000-0000-7000-8000-000000000000`,
        { headers: { authorization: `Bearer ${apiKey}` } },
      )
      expect(stream.status).toBe(410)
      await stream.body?.cancel()
    },
  )
})

describe.each(backends)('member agent visibility on the explorer tier, %s', (name, backend) => {
  let test: TestRegistry
  let key: string

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend, { seed: false, env: { MEMBER_TIER: 'explorer' } })
    key = (await test.registry.createOrg('Explorer Co')).apiKey
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  it.skipIf(!backend)(
    `stores public as members_only with a visibility_downgraded warning (${name})`,
    async () => {
      const agent = 'https://explorer.test/mcp'
      const registered = await api(test.registry, 'registerMemberAgent', '/api/me/agents', {
        token: key,
        body: { url: agent, type: 'sales', visibility: 'public' },
      })
      expect(registered.status).toBe(201)
      expect(registered.body).toMatchObject({
        agent: { url: agent, visibility: 'members_only' },
        org_auto_created: true,
        profile_auto_created: true,
        warnings: [
          {
            code: 'visibility_downgraded',
            agent_url: agent,
            requested: 'public',
            applied: 'members_only',
            reason: 'tier_required',
          },
        ],
      })
      expect(registered.body.warnings[0].message).toContain('explorer')
      const listed = await api(test.registry, 'listMemberAgents', '/api/me/agents', { token: key })
      expect(listed.body.agents).toEqual([{ url: agent, type: 'sales', visibility: 'members_only' }])
      // Not listed as a public agent anywhere.
      expect((await test.registry.repository.members.listVisibleAgents(['public'])).length).toBe(0)

      const path = `/api/me/agents/${encodeURIComponent(agent)}`
      const patched = await api(test.registry, 'updateMemberAgent', path, {
        method: 'PATCH',
        token: key,
        body: { visibility: 'public' },
      })
      expect(patched.status).toBe(200)
      expect(patched.body.agent.visibility).toBe('members_only')
      expect(patched.body.warnings).toHaveLength(1)
      // A members_only or private request is not gated.
      const quiet = await api(test.registry, 'updateMemberAgent', path, {
        method: 'PATCH',
        token: key,
        body: { visibility: 'private' },
      })
      expect(quiet.body).toEqual({ agent: { url: agent, type: 'sales', visibility: 'private' } })
      // Still removable: it never became public.
      expect(
        (await api(test.registry, 'removeMemberAgent', path, { method: 'DELETE', token: key })).status,
      ).toBe(204)
    },
  )
})

if (!postgresUrl) console.warn('registry API on postgres skipped: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)')
