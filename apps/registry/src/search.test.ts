/**
 * Search (`GET /api`, `GET /api/search`, `GET /api/manifest-refs/lookup`) on SQLite and PostgreSQL, driven
 * through `@adwire/registry-client` over real HTTP (every answer checked against the served and the upstream
 * document): ranked prefix search over the full-text index, the index kept in step by every write path,
 * pagination, and the refusals.
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PublisherSnapshot } from './domain/types.js'
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

interface SearchAnswer {
  brands: Array<{ domain: string; brand_name: string; score: number }>
  publishers: Array<{ domain: string; property_count: number }>
  properties: Array<{ publisher_domain: string; property_id: string; name: string; property_rid: string }>
  agents: Array<{ url: string; name: string; type: string | null }>
  has_more: Record<string, boolean>
}

/** A publisher snapshot with properties named `names` (ids p0, p1…). */
function snapshot(domain: string, names: string[], extra: Partial<PublisherSnapshot['publisher']> = {}) {
  const url = `https://${domain}/.well-known/adagents.json`
  return {
    publisher: { domain, source: 'adagents_json', valid: true, url, discovery_method: 'direct', ...extra },
    properties: names.map((name, index) => ({
      publisher_domain: domain,
      property_id: `p${index}`,
      property_type: 'website',
      name,
      identifiers: [{ type: 'domain', value: `s${index}.${domain}` }],
      tags: ['search_test'],
      source: 'adagents_json' as const,
    })),
    authorizations: [],
  } satisfies PublisherSnapshot
}

describe.each(backends)('search on %s', (name, backend) => {
  let test: TestRegistry
  let site: Site
  let anonymous: RegistryClient
  let member: RegistryClient

  const search = ({ q, ...query }: { q: string; types?: string; limit?: number; offset?: number }) =>
    anonymous.search(q, query) as Promise<SearchAnswer>

  beforeAll(async () => {
    if (!backend) return
    site = await startSite()
    site.serveJson('/.well-known/brand.json', CRAWLED_BRAND_JSON)
    test = await startTestRegistry(backend, { origins: { 'crawled-brand.test': site.origin } })
    const org = await test.registry.createOrg('Searcher')
    anonymous = clientOf(test.registry)
    member = clientOf(test.registry, org.apiKey)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await site?.close()
  })

  it.skipIf(!backend)(`finds every kind of entity by word prefix, best match first (${name})`, async () => {
    const pine = await search({ q: 'pinecrest' })
    expect(pine.publishers.map((p) => p.domain)).toEqual(['pinecrest-news.example'])
    expect(pine.publishers[0]!.property_count).toBe(3)
    expect(pine.properties.map((p) => p.property_id).sort()).toEqual([
      'pinecrest_app',
      'pinecrest_sports',
      'pinecrest_web',
    ])
    expect(pine.agents.map((a) => a.url)).toContain('https://ads.pinecrest-news.example/a2a')
    expect(pine.brands).toEqual([])

    // Prefixes of every term, all terms required; the title (brand name) outranks the body (house domain).
    const acme = await search({ q: 'Acm Out' })
    expect(acme.brands[0]).toMatchObject({ domain: 'acme-outdoor.example', brand_name: 'Acme Outdoor' })
    expect(acme.brands.map((b) => b.domain)).toContain('trailhead.example')
    expect(acme.brands[0]!.score).toBeGreaterThan(acme.brands.at(-1)!.score)
    expect((await search({ q: 'pinecrest sports' })).properties.map((p) => p.property_id)).toEqual([
      'pinecrest_sports',
    ])
    // Punctuation only: nothing to search for, an empty answer (not an error).
    expect(await search({ q: '!!' })).toMatchObject({
      brands: [],
      publishers: [],
      properties: [],
      agents: [],
    })
    // One category only.
    const only = await search({ q: 'pinecrest', types: 'properties' })
    expect(only.publishers).toEqual([])
    expect(only.properties).toHaveLength(3)
  })

  it.skipIf(!backend)(`keeps the index in step with every write (${name})`, async () => {
    const save = (brand_name: string) =>
      member.request('POST', '/api/brands/save', { body: { domain: 'zephyrine.test', brand_name } })
    await save('Zephyrine Widgets')
    expect((await search({ q: 'zephyr' })).brands.map((b) => b.domain)).toEqual(['zephyrine.test'])
    await save('Quokka Gadgets')
    expect((await search({ q: 'zephyrine widgets' })).brands).toEqual([])
    expect((await search({ q: 'quokka' })).brands.map((b) => b.brand_name)).toEqual(['Quokka Gadgets'])

    // A brand read from its own brand.json (the crawl's write path).
    await anonymous.resolveBrand('crawled-brand.test', { fresh: true })
    expect((await search({ q: 'crawled' })).brands.map((b) => b.domain)).toEqual(['crawled-brand.test'])

    // Member agents: indexed while public, by name; gone when made private.
    const url = 'https://marmoset.test/mcp'
    await member.registerMemberAgent({
      url,
      name: 'Marmoset Sales',
      type: 'sales',
      visibility: 'public',
    } as never)
    expect((await search({ q: 'marmoset' })).agents).toEqual([
      expect.objectContaining({ url, name: 'Marmoset Sales', type: 'sales' }),
    ])
    await member.updateMemberAgent(url, { visibility: 'private' } as never)
    expect((await search({ q: 'marmoset' })).agents).toEqual([])
    await member.updateMemberAgent(url, { visibility: 'public' } as never)
    expect((await search({ q: 'marmoset' })).agents).toHaveLength(1)
    await member.updateMemberAgent(url, { visibility: 'members_only' } as never)
    await member.removeMemberAgent(url)
    expect((await search({ q: 'marmoset' })).agents).toEqual([])

    // Publisher snapshots (the crawler's write path): renamed and withdrawn properties leave the index.
    const { repository } = test.registry
    await repository.publishers.saveSnapshot(
      snapshot('wombat.test', ['Wombat Weekly', 'Wombat Daily']),
      't',
      Date.now(),
    )
    expect((await search({ q: 'wombat weekly' })).properties.map((p) => p.name)).toEqual(['Wombat Weekly'])
    await repository.publishers.saveSnapshot(snapshot('wombat.test', ['Wombat Monthly']), 't', Date.now())
    const after = await search({ q: 'wombat' })
    expect(after.properties.map((p) => p.name)).toEqual(['Wombat Monthly'])
    expect(after.publishers.map((p) => p.domain)).toEqual(['wombat.test'])
  })

  it.skipIf(!backend)(`pages through a category in a stable relevance order (${name})`, async () => {
    const names = Array.from({ length: 12 }, (_, index) => `Narwhal Gazette ${index}`)
    await test.registry.repository.publishers.saveSnapshot(snapshot('narwhal.test', names), 't', Date.now())
    const seen: string[] = []
    for (let offset = 0; offset < 15; offset += 5) {
      const page = await search({ q: 'narwhal gazette', types: 'properties', limit: 5, offset })
      expect(page.properties.length).toBe(offset < 10 ? 5 : 2)
      expect(page.has_more.properties).toBe(offset < 10)
      seen.push(...page.properties.map((p) => p.property_id))
    }
    expect(new Set(seen).size).toBe(12)
    // The document's default: up to 5 per category.
    expect((await search({ q: 'narwhal' })).properties).toHaveLength(5)
  })

  it.skipIf(!backend)(`refuses malformed searches with the Error body (${name})`, async () => {
    for (const [query, code] of [
      [{}, 'missing_parameter'],
      [{ q: 'a' }, 'invalid_parameter'],
      [{ q: 'x'.repeat(257) }, 'value_too_long'],
      [{ q: 'acme', limit: 51 }, 'invalid_parameter'],
      [{ q: 'acme', limit: 0 }, 'invalid_parameter'],
      [{ q: 'acme', offset: -1 }, 'invalid_parameter'],
      [{ q: 'acme', offset: 'ten' }, 'invalid_parameter'],
      [{ q: 'acme', types: 'brands,robots' }, 'invalid_parameter'],
    ] as const) {
      const error = await refusal(anonymous.request('GET', '/api/search', { query }))
      expect(error.statusCode, JSON.stringify(query)).toBe(400)
      expect(error.data, JSON.stringify(query)).toMatchObject({ error: code, message: expect.any(String) })
    }
  })

  it.skipIf(!backend)(`answers the API discovery document (${name})`, async () => {
    const discovery = await anonymous.apiDiscovery()
    expect(discovery.openapi).toBe(`${test.registry.url}/openapi.json`)
    expect(discovery.endpoints.search).toBe(`${test.registry.url}/api/search`)
    const served = await fetch(discovery.openapi)
    expect(served.status).toBe(200)
  })

  it.skipIf(!backend)(`looks up the best manifest reference of a domain (${name})`, async () => {
    const lookup = ({ domain, ...query }: { domain: string; type?: string }) =>
      anonymous.lookupManifestRef(domain, query) as Promise<{
        success: boolean
        found: boolean
        reference?: Record<string, unknown>
      }>
    expect(await lookup({ domain: 'acme-outdoor.example' })).toEqual({
      success: true,
      found: true,
      reference: {
        reference_type: 'url',
        manifest_url: `${test.registry.url}/hosted/acme-outdoor.example/brand.json`,
        agent_url: null,
        agent_id: null,
        verification_status: 'valid',
      },
    })
    await anonymous.resolveBrand('crawled-brand.test', { fresh: true })
    expect((await lookup({ domain: 'crawled-brand.test', type: 'brand.json' })).reference).toMatchObject({
      reference_type: 'url',
      manifest_url: `${site.origin}/.well-known/brand.json`,
      verification_status: 'valid',
    })
    expect(
      (await lookup({ domain: 'pinecrest-news.example', type: 'adagents.json' })).reference,
    ).toMatchObject({
      manifest_url: 'https://pinecrest-news.example/.well-known/adagents.json',
      verification_status: 'valid',
    })
    expect(await lookup({ domain: 'nobody-here.example' })).toEqual({ success: false, found: false })
    expect(await refusal(lookup({ domain: 'not a domain' }))).toMatchObject({
      statusCode: 400,
      data: { error: 'invalid_domain' },
    })
    expect(await refusal(lookup({ domain: 'acme-outdoor.example', type: 'ads.txt' }))).toMatchObject({
      statusCode: 400,
      data: { error: 'invalid_parameter' },
    })
    expect(await refusal(anonymous.request('GET', '/api/manifest-refs/lookup'))).toMatchObject({
      statusCode: 400,
      data: { error: 'missing_parameter' },
    })
  })
})
