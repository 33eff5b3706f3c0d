/**
 * The audit's defects, each pinned, on SQLite and PostgreSQL: the service is driven through
 * `@adwire/registry-client` over real HTTP (`clientOf` checks every answer against the served and the upstream
 * document), with real origin sites on 127.0.0.1 where a crawl is involved.
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_ADAGENTS } from './seed.js'
import { adagentsSchemaErrors } from './spec/adagents-schema.js'
import {
  clientOf,
  CRAWLED_BRAND_JSON,
  startSite,
  startTestRegistry,
  type Site,
  type TestRegistry,
  refusal,
  testBackends,
} from './testing/registry.js'

const backends = await testBackends()

describe.each(backends)('audit defects on %s', (name, backend) => {
  let test: TestRegistry
  let site: Site
  let orgA: { id: string; apiKey: string }
  let orgB: { id: string; apiKey: string }
  let anonymous: RegistryClient
  let a: RegistryClient
  let b: RegistryClient

  beforeAll(async () => {
    if (!backend) return
    site = await startSite()
    site.serveJson('/.well-known/brand.json', CRAWLED_BRAND_JSON)
    site.serveJson('/.well-known/adagents.json', DEMO_ADAGENTS['pinecrest-news.example'])
    test = await startTestRegistry(backend, {
      origins: { 'crawled-brand.test': site.origin, 'pinecrest-news.example': site.origin },
    })
    orgA = await test.registry.createOrg('Owner A')
    orgB = await test.registry.createOrg('Other B')
    anonymous = clientOf(test.registry)
    a = clientOf(test.registry, orgA.apiKey)
    b = clientOf(test.registry, orgB.apiKey)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await site?.close()
  })

  it.skipIf(!backend)(
    `lets only the owner edit a brand: 403 for others, 409 when authoritative (${name})`,
    async () => {
      const save = (client: RegistryClient, domain: string, brand_name = 'Mine') =>
        client.request<{ revision_number: number }>('POST', '/api/brands/save', {
          body: { domain, brand_name },
        })
      expect((await save(a, 'owned-brand.test')).revision_number).toBe(1)
      const taken = await refusal(save(b, 'owned-brand.test', 'Stolen'))
      expect(taken).toMatchObject({ statusCode: 403, code: 'brand_not_owned' })
      expect((await save(a, 'owned-brand.test', 'Still mine')).revision_number).toBe(2)
      expect((await anonymous.resolveBrand('owned-brand.test')).brand_name).toBe('Still mine')

      // A hosted demo brand: nobody may overwrite it, and its hosted brand.json stays.
      expect(await refusal(save(b, 'acme-outdoor.example', 'Squat'))).toMatchObject({
        statusCode: 403,
        code: 'brand_not_owned',
      })
      const hosted = await fetch(`${test.registry.url}/hosted/acme-outdoor.example/brand.json`)
      expect(hosted.status).toBe(200)
      expect(((await hosted.json()) as { house: { name: string } }).house.name).toBe('Acme Outdoor Group')

      // A brand whose own brand.json the registry read: authoritative, 409 for everyone.
      expect((await anonymous.resolveBrand('crawled-brand.test', { fresh: true })).source).toBe('brand_json')
      expect(await refusal(save(a, 'crawled-brand.test'))).toMatchObject({
        statusCode: 409,
        code: 'brand_authoritative',
      })
    },
  )

  it.skipIf(!backend)(`ships valid demo adagents.json files and honest stats (${name})`, async () => {
    for (const [domain, document] of Object.entries(DEMO_ADAGENTS)) {
      expect(adagentsSchemaErrors(document), domain).toEqual([])
    }
    // The registry's own validator, over HTTP, on the demo file as its origin serves it.
    const validated = await anonymous.validateProperty('pinecrest-news.example')
    expect(validated).toMatchObject({ valid: true })
    const stats = await anonymous.getStats()
    expect(stats.publishers_with_valid_adagents).toBe(Object.keys(DEMO_ADAGENTS).length)
    const resolved = await anonymous.resolveProperty('riverside-radio.example')
    expect(resolved.properties?.length).toBe(2)
    for (const property of resolved.properties ?? []) {
      expect((property as { id?: string }).id).toMatch(/^[a-z0-9_]+$/)
    }
  })

  it.skipIf(!backend)(
    `shows an operator's member agents by visibility, and scope only narrows (${name})`,
    async () => {
      const register = (url: string, visibility: string) =>
        a.registerMemberAgent({ url, type: 'sales', visibility } as never)
      await register('https://public.operator.test/mcp', 'public')
      await register('https://members.operator.test/mcp', 'members_only')
      await register('https://private.operator.test/mcp', 'private')
      const urls = async (client: RegistryClient, scope?: string) =>
        (
          await client.request<{ agents: Array<{ url: string }> }>('GET', '/api/registry/operator', {
            query: { domain: 'operator.test', ...(scope ? { scope } : {}) },
          })
        ).agents
          .map((agent) => new URL(agent.url).host.split('.')[0])
          .sort()
      expect(await urls(anonymous)).toEqual(['public'])
      expect(await urls(anonymous, 'member')).toEqual(['public'])
      expect(await urls(b)).toEqual(['members', 'public'])
      expect(await urls(b, 'private')).toEqual([])
      expect(await urls(a)).toEqual(['members', 'private', 'public'])
      expect(await urls(a, 'public')).toEqual(['public'])
      expect(await urls(a, 'private')).toEqual(['private'])
      expect(
        await refusal(
          anonymous.request('GET', '/api/registry/operator', {
            query: { domain: 'operator.test', scope: 'x' },
          }),
        ),
      ).toMatchObject({ statusCode: 400, code: 'invalid_parameter' })
      // Agents that publishers' adagents.json files name are public facts, with the publishers that trust them.
      const network = await anonymous.request<{
        agents: Array<{ url: string; authorized_by: Array<{ publisher_domain: string }> }>
      }>('GET', '/api/registry/operator', { query: { domain: 'adnetwork.example' } })
      expect(network.agents.map((agent) => agent.url)).toEqual(['https://sales.adnetwork.example/mcp'])
      expect(network.agents[0]!.authorized_by.map((entry) => entry.publisher_domain).sort()).toEqual([
        'pinecrest-news.example',
        'riverside-radio.example',
      ])
    },
  )

  it.skipIf(!backend)(
    `rejects values above a documented maximum instead of capping them (${name})`,
    async () => {
      expect(await refusal(anonymous.listBrands({ limit: 1001 }))).toMatchObject({
        statusCode: 400,
        code: 'invalid_parameter',
      })
      expect((await anonymous.listBrands({ limit: 1000 })).brands.length).toBeGreaterThan(0)
      expect(await refusal(a.getFeed({ limit: 10_001 }))).toMatchObject({ statusCode: 400 })
      const stream = a.streamFeed({ pollIntervalSeconds: 61 })
      expect(await refusal(stream.next())).toMatchObject({ statusCode: 400, code: 'invalid_parameter' })
    },
  )

  it.skipIf(!backend)(`validates formats and lengths strictly (${name})`, async () => {
    expect(
      await refusal(a.registerMemberAgent({ url: 'ftp://files.example/agent', type: 'sales' } as never)),
    ).toMatchObject({ statusCode: 400, code: 'invalid_agent_url' })
    expect(await refusal(anonymous.getAgentDomains('not-a-url'))).toMatchObject({
      statusCode: 400,
      code: 'invalid_agent_url',
    })
    expect(await refusal(a.getCrawlRequest('not-a-uuid'))).toMatchObject({
      statusCode: 400,
      code: 'invalid_parameter',
    })
    expect(
      await refusal(
        anonymous.request('GET', '/api/brands/resolve', {
          query: { domain: 'acme-outdoor.example', fresh: 'maybe' },
        }),
      ),
    ).toMatchObject({ statusCode: 400, code: 'invalid_parameter' })
    const long = await refusal(
      a.request('POST', '/api/brands/save', {
        body: { domain: 'long-name.test', brand_name: 'x'.repeat(100_000) },
      }),
    )
    expect(long).toMatchObject({ statusCode: 400, code: 'value_too_long' })
    expect(await refusal(anonymous.resolveBrand('long-name.test'))).toMatchObject({ statusCode: 404 })
    expect(
      await refusal(anonymous.request('GET', '/api/brands/find', { query: { q: 'y'.repeat(5000) } })),
    ).toMatchObject({ statusCode: 400, code: 'value_too_long' })
  })

  it.skipIf(!backend)(`answers an invalid A-label with 400, not 500 (${name})`, async () => {
    for (const call of [
      anonymous.validateProperty('xn--zz.com'),
      anonymous.resolveBrand('xn--zz.com'),
      anonymous.resolveProperty('xn--zz.com'),
      anonymous.request('POST', '/api/adagents/validate', { body: { domain: 'xn--zz.com' } }),
    ]) {
      expect(await refusal(call)).toMatchObject({ statusCode: 400, code: 'invalid_domain' })
    }
  })

  it.skipIf(!backend)(
    `streams with Cache-Control no-cache, no-transform and charset=utf-8 (${name})`,
    async () => {
      const controller = new AbortController()
      const response = await fetch(`${test.registry.url}/api/registry/feed/stream`, {
        headers: { authorization: `Bearer ${orgA.apiKey}` },
        signal: controller.signal,
      })
      try {
        expect(response.status).toBe(200)
        expect(response.headers.get('cache-control')).toBe('no-cache, no-transform')
        expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      } finally {
        controller.abort()
        await response.body?.cancel().catch(() => {})
      }
    },
  )

  it.skipIf(!backend)(`reads dotted bundle ids as bundle ids in bulk checks (${name})`, async () => {
    const checked = await anonymous.request<{
      entries: Array<{ input: string; identifier: { type: string; value: string }; verdict: string }>
    }>('POST', '/api/properties/check/bulk', {
      body: { identifiers: ['example.pinecrest.news', 'com.unknown.app', 'pinecrest-news.example'] },
    })
    expect(checked.entries.map((entry) => [entry.identifier.type, entry.verdict])).toEqual([
      ['bundle_id', 'ready'],
      ['bundle_id', 'unknown'],
      ['domain', 'ready'],
    ])
  })

  it.skipIf(!backend)(
    `has history and hosted brand.json for demo entities that resolve (${name})`,
    async () => {
      const propertyHistory = await anonymous.request<{ total: number }>('GET', '/api/properties/history', {
        query: { domain: 'riverside-radio.example' },
      })
      expect(propertyHistory.total).toBeGreaterThanOrEqual(1)
      const brandHistory = await anonymous.request<{ total: number }>('GET', '/api/brands/history', {
        query: { domain: 'northwind-foods.example' },
      })
      expect(brandHistory.total).toBeGreaterThanOrEqual(1)
      for (const domain of ['acme-outdoor.example', 'trailhead.example', 'northwind-foods.example']) {
        expect((await anonymous.resolveBrand(domain)).source).toBe('hosted')
        expect((await anonymous.getBrandJson(domain)).data).toMatchObject({ house: expect.any(Object) })
        const hosted = await fetch(`${test.registry.url}/hosted/${domain}/brand.json`)
        expect(hosted.status, domain).toBe(200)
      }
      expect(
        await refusal(
          anonymous.request('GET', '/api/properties/history', { query: { domain: 'never.test' } }),
        ),
      ).toMatchObject({ statusCode: 404 })
    },
  )
})
