/**
 * Defects of the registry found by the outside probe (issue 22), each proven on SQLite and PostgreSQL against
 * real publisher sites on 127.0.0.1 that count the fetches they answer, with a clock the test moves:
 *
 * - `revalidatePublisherAdagents` is admin-only and fetches a domain live at most once per 5 minutes;
 * - `requestCrawl` starts at most one crawl per domain per 5 minutes (429 with `retry_after` within them);
 * - `authorization.granted` feed events carry `authorization_type` and match the official event schema;
 * - `validateProductAuthorization` with a selector naming no publisher is true when every property it
 *   addresses is authorized.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { officialErrors } from '@adwire/conformance/official'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, startTestRegistry, testBackends, type TestRegistry } from './testing/registry.js'

const backends = await testBackends()

const ADMIN_KEY = `admin_${'m'.repeat(40)}`
const MINUTE = 60_000
const AGENT = 'https://sales.misc.test/mcp'
const TAGGED_AGENT = 'https://tags.misc.test/mcp'

/** A publisher site serving one adagents.json and counting the requests for it. */
interface CountingSite {
  readonly origin: string
  hits(): number
  close(): Promise<void>
}

async function countingSite(document: unknown): Promise<CountingSite> {
  let hits = 0
  const body = JSON.stringify(document)
  const server: Server = createServer((request, response) => {
    if ((request.url ?? '').startsWith('/.well-known/adagents.json')) {
      hits += 1
      response.writeHead(200, { 'content-type': 'application/json' }).end(body)
      return
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const property = (id: string, domain: string, tags: string[]) => ({
  property_id: id,
  property_type: 'website',
  name: id,
  identifiers: [{ type: 'domain', value: domain }],
  tags,
})

const adagents = (properties: object[], agents: object[]) => ({
  $schema: 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json',
  properties,
  authorized_agents: agents,
  last_updated: '2026-06-01T00:00:00Z',
})

/** pub-a: `home` and `sport`; the agent holds `home` by id, the tagged agent everything tagged news. */
const PUB_A = adagents(
  [property('home', 'pub-a.misc.test', ['news']), property('sport', 'sport.pub-a.misc.test', ['sports'])],
  [
    { url: AGENT, authorized_for: 'home', authorization_type: 'property_ids', property_ids: ['home'] },
    {
      url: TAGGED_AGENT,
      authorized_for: 'news',
      authorization_type: 'property_tags',
      property_tags: ['news'],
    },
  ],
)
/** pub-b: only `front`, which the agent holds by id (no `home` here). */
const PUB_B = adagents(
  [property('front', 'pub-b.misc.test', ['news'])],
  [{ url: AGENT, authorized_for: 'front', authorization_type: 'property_ids', property_ids: ['front'] }],
)

/** The sites of the revalidation and crawl-request tests: another agent, another property. */
const ELSEWHERE = adagents(
  [property('x', 'elsewhere.misc.test', [])],
  [
    {
      url: 'https://elsewhere.misc.test/mcp',
      authorized_for: 'x',
      authorization_type: 'property_ids',
      property_ids: ['x'],
    },
  ],
)

describe.each(backends)('registry defects of issue 22 on %s', (name, backend) => {
  let test: TestRegistry
  let clock = Date.now()
  let reval: CountingSite
  let crawl: CountingSite
  let pubA: CountingSite
  let pubB: CountingSite
  let member: string
  let other: string

  beforeAll(async () => {
    if (!backend) return
    ;[reval, crawl, pubA, pubB] = await Promise.all([
      countingSite(ELSEWHERE),
      countingSite(ELSEWHERE),
      countingSite(PUB_A),
      countingSite(PUB_B),
    ])
    test = await startTestRegistry(backend, {
      now: () => clock,
      seed: false,
      env: { ADMIN_API_KEY: ADMIN_KEY },
      origins: {
        'reval.misc.test': reval.origin,
        'crawl.misc.test': crawl.origin,
        'pub-a.misc.test': pubA.origin,
        'pub-b.misc.test': pubB.origin,
      },
    })
    member = (await test.registry.createOrg('Member')).apiKey
    other = (await test.registry.createOrg('Other')).apiKey
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await Promise.all([reval, crawl, pubA, pubB].map((site) => site?.close()))
  })

  it.skipIf(!backend)(
    `revalidatePublisherAdagents is admin-only and fetches a domain at most once per 5 minutes (${name})`,
    async () => {
      const path = '/api/registry/publisher/reval.misc.test/adagents/revalidate'
      const revalidate = (token?: string) =>
        api(test.registry, 'revalidatePublisherAdagents', path, {
          method: 'POST',
          ...(token ? { token } : {}),
        })
      expect((await revalidate()).status).toBe(401)
      // A member key: 403, and nothing was fetched.
      const refused = await revalidate(member)
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ error: 'admin_required' })
      expect(reval.hits()).toBe(0)
      // A domain that resolves nowhere: 400 before anything is recorded or fetched.
      const nowhere = await api(
        test.registry,
        'revalidatePublisherAdagents',
        '/api/registry/publisher/nothing-here.invalid/adagents/revalidate',
        { method: 'POST', token: ADMIN_KEY },
      )
      expect(nowhere).toMatchObject({ status: 400, body: { error: 'unresolvable_domain' } })
      expect(
        await test.registry.repository.discovery.getOutbound('adagents_revalidation', 'nothing-here.invalid'),
      ).toBe(undefined)

      const first = await revalidate(ADMIN_KEY)
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ domain: 'reval.misc.test', adagents_valid: true })
      expect(reval.hits()).toBe(1)

      // Within 5 minutes: 429 with retry_after and Retry-After, no second live fetch.
      clock += 2 * MINUTE
      const again = await revalidate(ADMIN_KEY)
      expect(again.status).toBe(429)
      expect(again.body).toMatchObject({ error: 'rate_limited', retry_after: 180 })
      expect(again.headers.get('retry-after')).toBe('180')
      expect(reval.hits()).toBe(1)

      clock += 3 * MINUTE
      expect((await revalidate(ADMIN_KEY)).status).toBe(200)
      expect(reval.hits()).toBe(2)
    },
  )

  it.skipIf(!backend)(
    `requestCrawl starts at most one crawl per domain per 5 minutes, whoever asks (${name})`,
    async () => {
      const request = (token: string) =>
        api(test.registry, 'requestCrawl', '/api/registry/crawl-request', {
          token,
          body: { domain: 'crawl.misc.test' },
        })
      const first = await request(member)
      expect(first.status).toBe(202)
      await test.registry.crawlsIdle()
      expect(crawl.hits()).toBe(1)

      // The first crawl has completed; a second request within 5 minutes, from another organization, starts
      // nothing and is answered 429 with the seconds left.
      clock += MINUTE
      const again = await request(other)
      expect(again.status).toBe(429)
      expect(again.body).toMatchObject({ error: 'rate_limited', retry_after: 240 })
      expect(again.headers.get('retry-after')).toBe('240')
      await test.registry.crawlsIdle()
      expect(crawl.hits()).toBe(1)

      // Concurrent requests after the interval: exactly one is accepted.
      clock += 4 * MINUTE
      const burst = await Promise.all([request(member), request(other), request(member)])
      expect(burst.map((answer) => answer.status).sort()).toEqual([202, 429, 429])
      await test.registry.crawlsIdle()
      expect(crawl.hits()).toBe(2)
    },
  )

  it.skipIf(!backend)(
    `authorization.granted events carry authorization_type and match the official event schema (${name})`,
    async () => {
      await test.registry.deps.crawler.crawlPublisher('pub-a.misc.test', 'test')
      await test.registry.deps.crawler.crawlPublisher('pub-b.misc.test', 'test')
      const feed = await api(test.registry, 'getRegistryFeed', '/api/registry/feed?types=authorization.*', {
        token: member,
      })
      const granted = (
        feed.body.events as Array<{ event_type: string; payload: Record<string, unknown> }>
      ).filter(
        (event) =>
          event.event_type === 'authorization.granted' &&
          String(event.payload.publisher_domain).startsWith('pub-'),
      )
      expect(
        granted
          .map(
            (event) =>
              `${String(event.payload.publisher_domain)} ${String(event.payload.agent_url)} ${String(event.payload.authorization_type)}`,
          )
          .sort(),
      ).toEqual([
        `pub-a.misc.test ${AGENT} property_ids`,
        `pub-a.misc.test ${TAGGED_AGENT} property_tags`,
        `pub-b.misc.test ${AGENT} property_ids`,
      ])
      for (const event of granted) expect(officialErrors('core/registry-event.json', event)).toEqual([])
    },
  )

  it.skipIf(!backend)(
    `validateProductAuthorization: a selector naming no publisher is true when all it addresses is authorized (${name})`,
    async () => {
      // pub-a and pub-b are crawled by the test before (they authorize AGENT; only pub-a has `home`).
      const validate = (selector: object) =>
        api(test.registry, 'validateProductAuthorization', '/api/registry/validate/product-authorization', {
          body: { agent_url: AGENT, publisher_properties: [selector] },
        })
      const home = await validate({ property_ids: ['home'] })
      expect(home.body).toMatchObject({
        authorized: true,
        publishers: [{ publisher_domain: 'pub-a.misc.test', authorized_all: true }],
      })
      expect(home.body.publishers).toHaveLength(1)
      // Both publishers addressed, both authorized.
      expect((await validate({ property_ids: ['home', 'front'] })).body.authorized).toBe(true)
      // `sport` exists at pub-a but the agent does not hold it.
      expect((await validate({ property_ids: ['home', 'sport'] })).body).toMatchObject({
        authorized: false,
        publishers: [{ publisher_domain: 'pub-a.misc.test', unauthorized_property_ids: ['sport'] }],
      })
      // Addressing nothing at all is not an authorization.
      expect((await validate({ property_ids: ['nowhere'] })).body.authorized).toBe(false)
      // A named publisher where the selector picks nothing still answers false.
      expect(
        (await validate({ publisher_domain: 'pub-b.misc.test', property_ids: ['home'] })).body.authorized,
      ).toBe(false)
    },
  )
})
