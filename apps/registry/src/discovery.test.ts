/**
 * Brand Discovery (crawl requests, forced crawls) and Agent Discovery part 2 (inventory-profile search, manager
 * re-validation) on SQLite and PostgreSQL, driven through `@adwire/registry-client` over real HTTP (every answer
 * checked against the served and the upstream document), with real brand sites on 127.0.0.1 and a clock the
 * test moves (the 5-minute debounce and the manager drain tick).
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCrawler } from './crawl/crawler.js'
import { MANAGER_BATCH } from './crawl/discovery-jobs.js'
import { DEMO_AGENTS } from './seed.js'
import {
  api,
  clientOf,
  startSite,
  startTestRegistry,
  type Site,
  type TestRegistry,
  refusal,
  testBackends,
} from './testing/registry.js'

const backends = await testBackends()

const ADMIN_KEY = `admin_${'k'.repeat(40)}`
const MINUTE = 60_000

const portfolio = (domain: string, name: string) => ({
  house: { domain, name: `${name} House` },
  brands: [{ id: 'main', names: [{ en: name }], keller_type: 'master', url: `https://${domain}` }],
})

/** 58 delegating publishers: 3 of small.manager.test, 55 of big.manager.test. */
const SMALL = ['a', 'b', 'c'].map((letter) => `pub-${letter}.small.test`)
const BIG = Array.from({ length: 55 }, (_, index) => `pub-${index}.big.test`)

describe.each(backends)('brand and agent discovery on %s', (name, backend) => {
  let test: TestRegistry
  let site: Site
  let empty: Site
  let promote: Site
  let clock = Date.now()
  let anonymous: RegistryClient
  let member: RegistryClient
  let admin: RegistryClient

  beforeAll(async () => {
    if (!backend) return
    site = await startSite()
    site.serveJson('/.well-known/brand.json', portfolio('crawl-me.test', 'Crawl Me'))
    empty = await startSite()
    promote = await startSite()
    promote.serveJson('/.well-known/brand.json', portfolio('promote-me.test', 'Promote Me'))
    test = await startTestRegistry(backend, {
      now: () => clock,
      env: { ADMIN_API_KEY: ADMIN_KEY },
      origins: {
        'crawl-me.test': site.origin,
        'promote-me.test': promote.origin,
        'no-brand.test': empty.origin,
        'acme-outdoor.example': empty.origin,
        ...Object.fromEntries([...SMALL, ...BIG].map((domain) => [domain, empty.origin])),
      },
    })
    const org = await test.registry.createOrg('Discoverer')
    anonymous = clientOf(test.registry)
    member = clientOf(test.registry, org.apiKey)
    admin = clientOf(test.registry, ADMIN_KEY)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await site?.close()
    await empty?.close()
    await promote?.close()
  })

  it.skipIf(!backend)(
    `crawls a brand.json on request, in the background, once per 5 minutes (${name})`,
    async () => {
      const request = (client: RegistryClient, domain: string) => client.requestBrandCrawl(domain)
      expect(await refusal(request(anonymous, 'crawl-me.test'))).toMatchObject({ statusCode: 401 })
      expect(await refusal(request(member, 'not a domain'))).toMatchObject({
        statusCode: 400,
        data: { error: 'invalid_domain' },
      })
      expect(await request(member, 'Crawl-Me.test')).toEqual({
        message: 'Brand crawl request accepted',
        domain: 'crawl-me.test',
      })
      await test.registry.crawlsIdle()
      expect(await anonymous.resolveBrand('crawl-me.test')).toMatchObject({ source: 'brand_json' })
      expect(
        await test.registry.repository.discovery.getOutbound('brand_crawl', 'crawl-me.test'),
      ).toMatchObject({
        status: 'completed',
      })

      // Debounced per domain: 429 with retry_after and Retry-After, whoever asks.
      const again = await api(test.registry, 'requestBrandCrawl', '/api/registry/brand-crawl-request', {
        token: (await test.registry.createOrg('Other')).apiKey,
        body: { domain: 'crawl-me.test' },
      })
      expect(again.status).toBe(429)
      expect(again.body).toMatchObject({ error: 'rate_limited', retry_after: 300 })
      expect(again.headers.get('retry-after')).toBe('300')
      clock += 2 * MINUTE
      expect((await refusal(request(member, 'crawl-me.test'))).retryAfter).toBe(180)
      clock += 3 * MINUTE
      expect((await request(member, 'crawl-me.test')).domain).toBe('crawl-me.test')

      // A domain that resolves nowhere: refused before anything is queued.
      expect(await refusal(request(member, 'nothing-here.invalid'))).toMatchObject({
        statusCode: 400,
        data: { error: 'unresolvable_domain', domain: 'nothing-here.invalid' },
      })
      expect(
        await test.registry.repository.discovery.getOutbound('brand_crawl', 'nothing-here.invalid'),
      ).toBe(undefined)
      // A domain whose origin is a private address, under the default policy (no ALLOW_PRIVATE_CRAWL).
      const strict = createCrawler(test.registry.repository, {
        fetch: () => Promise.reject(new Error('the preflight fetches nothing')),
        maxBytes: 1024,
        originFor: (domain) => (domain === 'intranet.test' ? 'http://10.1.2.3:8080' : `http://127.0.0.1:9`),
      })
      expect(await strict.preflight('intranet.test')).toMatchObject({ reason: 'private_address' })
      expect(await strict.preflight('loopback.test')).toMatchObject({ reason: 'private_address' })

      // A domain without brand.json: accepted, and the request records the failure.
      await request(member, 'no-brand.test')
      await test.registry.crawlsIdle()
      expect(
        await test.registry.repository.discovery.getOutbound('brand_crawl', 'no-brand.test'),
      ).toMatchObject({
        status: 'failed',
        last_error: expect.stringContaining('404'),
      })
    },
  )

  it.skipIf(!backend)(`forces a synchronous crawl for administrators only (${name})`, async () => {
    const force = (client: RegistryClient, domain: string) => client.forceBrandCrawl(domain)
    await member.request('POST', '/api/brands/save', {
      body: { domain: 'promote-me.test', brand_name: 'Community Guess' },
    })
    expect(await refusal(force(anonymous, 'promote-me.test'))).toMatchObject({ statusCode: 401 })
    expect(await refusal(force(member, 'promote-me.test'))).toMatchObject({
      statusCode: 403,
      data: { error: 'admin_required' },
    })
    expect(await refusal(force(admin, 'not_a_domain'))).toMatchObject({ statusCode: 400 })

    const promoted = await force(admin, 'promote-me.test')
    expect(promoted).toMatchObject({
      domain: 'promote-me.test',
      previous_source: 'community',
      new_source: 'brand_json',
      previous_source_type: 'community',
      new_source_type: 'brand_json',
      promoted: true,
      brand_json_found: true,
      live_variant: 'house_portfolio',
      has_manifest: true,
      checked_at: new Date(clock).toISOString(),
    })
    expect((await anonymous.resolveBrand('promote-me.test')).source).toBe('brand_json')
    expect(await refusal(force(admin, 'promote-me.test'))).toMatchObject({
      statusCode: 429,
      data: { error: 'rate_limited', retry_after: 300 },
    })

    // Nothing at the origin: answered, nothing stored, nothing promoted.
    expect(await force(admin, 'no-brand.test')).toMatchObject({
      previous_source: null,
      new_source: null,
      promoted: false,
      brand_json_found: false,
      live_variant: null,
      has_manifest: false,
    })
    // A hosted brand stays hosted: live evidence is reported, never adopted over the verified owner.
    expect(await force(admin, 'acme-outdoor.example')).toMatchObject({
      previous_source: 'hosted',
      new_source: 'hosted',
      promoted: false,
    })
  })

  it.skipIf(!backend)(
    `searches agent inventory profiles with AND/OR filters and a cursor (${name})`,
    async () => {
      type Page = {
        results: Array<{
          agent_url: string
          property_types: string[]
          channels: string[]
          tags: string[]
          property_count: number
          publisher_count: number
          relevance_score: number
          matched_filters: string[]
        }>
        cursor: string | null
        has_more: boolean
      }
      const profiles = (query: Record<string, string | number> = {}) =>
        member.searchAgentProfiles(query as never) as Promise<Page>
      expect(await refusal(anonymous.request('GET', '/api/registry/agents/search'))).toMatchObject({
        statusCode: 401,
      })

      const all = await profiles()
      const network = all.results.find((agent) => agent.agent_url === DEMO_AGENTS.network)!
      // The network sells pinecrest_web (website) and both Riverside audio properties (radio, podcast).
      expect(network).toMatchObject({
        property_types: ['podcast', 'radio', 'website'],
        channels: ['display', 'olv', 'podcast', 'radio'],
        property_count: 3,
        publisher_count: 2,
        relevance_score: 1,
      })

      // OR within a dimension, AND across dimensions; ranked by the share of asked values matched.
      const audio = await profiles({ property_types: 'radio,ctv_app', tags: 'audio' })
      expect(audio.results.map((agent) => agent.agent_url)).toEqual([DEMO_AGENTS.network])
      expect(audio.results[0]).toMatchObject({
        relevance_score: 0.75,
        matched_filters: ['property_types:radio', 'tags:audio'],
      })
      const web = await profiles({ channels: 'display' })
      expect(web.results.map((agent) => agent.agent_url).sort()).toEqual(
        [DEMO_AGENTS.network, DEMO_AGENTS.pinecrest].sort(),
      )
      expect(
        (await profiles({ channels: 'display', tags: 'podcast' })).results.map((a) => a.agent_url),
      ).toEqual([DEMO_AGENTS.network])
      expect((await profiles({ categories: 'IAB-7' })).results).toEqual([])
      expect((await profiles({ has_tmp: 'true' })).results).toEqual([])
      expect((await profiles({ min_properties: 3 })).results).toHaveLength(2)
      expect((await profiles({ min_properties: 4 })).results).toEqual([])

      // Pages: the cursor of one page opens the next, the last has none.
      const first = await profiles({ channels: 'display', limit: 1 })
      expect(first).toMatchObject({ has_more: true, cursor: expect.any(String) })
      const second = await profiles({ channels: 'display', limit: 1, cursor: first.cursor! })
      expect(second).toMatchObject({ has_more: false, cursor: null })
      expect(second.results[0]!.agent_url).not.toBe(first.results[0]!.agent_url)

      for (const query of [
        { cursor: 'garbage!' },
        { limit: 201 },
        { limit: 0 },
        { has_tmp: 'maybe' },
        { min_properties: -1 },
      ] as Array<Record<string, string | number>>) {
        const error = await refusal(profiles(query))
        expect(error.statusCode, JSON.stringify(query)).toBe(400)
        expect(error.data, JSON.stringify(query)).toMatchObject({
          error: expect.any(String),
          message: expect.any(String),
        })
      }
    },
  )

  it.skipIf(!backend)(
    `queues a manager's delegating publishers and drains them at a bounded rate (${name})`,
    async () => {
      const { repository } = test.registry
      for (const [domains, manager] of [
        [SMALL, 'small.manager.test'],
        [BIG, 'big.manager.test'],
      ] as const) {
        for (const domain of domains) {
          await repository.publishers.saveSnapshot(
            {
              publisher: { domain, source: 'adagents_json', valid: true, manager_domain: manager },
              properties: [],
              authorizations: [],
            },
            'test',
            clock,
          )
        }
      }
      const revalidate = (client: RegistryClient, managerDomain: string) =>
        client.requestManagerRevalidation(managerDomain)
      expect(await refusal(revalidate(anonymous, 'small.manager.test'))).toMatchObject({ statusCode: 401 })
      expect(await refusal(revalidate(member, 'http://'))).toMatchObject({ statusCode: 400 })
      const since = new Date(clock).toISOString()

      expect(await revalidate(member, 'Small.Manager.test')).toEqual({
        message: 'Manager re-validation enqueued',
        manager_domain: 'small.manager.test',
        publishers_enqueued: 3,
      })
      await test.registry.crawlsIdle()
      // Drained at once (the first batch of the tick) into durable crawl requests, which ran.
      expect(await repository.discovery.pendingManagerRevalidations()).toBe(0)
      for (const domain of SMALL) {
        expect((await repository.requests.recentCrawlRequest(domain, since))?.status, domain).toBe('invalid')
      }
      expect(await refusal(revalidate(member, 'small.manager.test'))).toMatchObject({ statusCode: 429 })
      expect(await revalidate(member, 'nobody.manager.test')).toMatchObject({ publishers_enqueued: 0 })

      // 55 more within the same tick: queued, not drained.
      expect((await revalidate(member, 'big.manager.test')).publishers_enqueued).toBe(55)
      await test.registry.crawlsIdle()
      expect(await repository.discovery.pendingManagerRevalidations()).toBe(55)

      // The next tick drains one batch of 50; the request after 5 minutes refreshes the 5 left.
      clock += 5 * MINUTE
      expect((await revalidate(member, 'big.manager.test')).publishers_enqueued).toBe(55)
      await test.registry.crawlsIdle()
      expect(await repository.discovery.pendingManagerRevalidations()).toBe(55 - MANAGER_BATCH)
    },
  )
})

describe.each(backends)('the crawl rate limit on brand and manager requests on %s', (name, backend) => {
  let test: TestRegistry

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend, {
      seed: false,
      env: { RATE_LIMIT_CRAWL_PER_MINUTE: '2', ADMIN_API_KEY: ADMIN_KEY },
      // Port 9 on loopback: resolvable (the preflight passes), nothing answers (the crawls fail fast).
      origins: { 'one.limited.test': 'http://127.0.0.1:9', 'five.limited.test': 'http://127.0.0.1:9' },
    })
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  it.skipIf(!backend)(
    `shares one per-caller budget with the adagents.json crawl requests (${name})`,
    async () => {
      const member = clientOf(test.registry, (await test.registry.createOrg('Eager')).apiKey)
      await member.requestBrandCrawl('one.limited.test')
      await member.requestManagerRevalidation('two.limited.test')
      // Different domains (no debounce): the third crawl-class call of the minute is refused.
      const refused = await refusal(member.requestCrawl('three.limited.test'))
      expect(refused).toMatchObject({ statusCode: 429, retryAfter: 30 })
      expect(await refusal(member.requestBrandCrawl('four.limited.test'))).toMatchObject({
        statusCode: 429,
        data: { error: 'rate_limited', retry_after: 30 },
      })
      // Another caller (the administrator bearer, counted by client IP) has its own budget.
      const admin = clientOf(test.registry, ADMIN_KEY)
      expect(await admin.forceBrandCrawl('five.limited.test')).toMatchObject({
        domain: 'five.limited.test',
        brand_json_found: false,
      })
      await test.registry.crawlsIdle()
    },
  )
})
