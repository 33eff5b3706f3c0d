/**
 * Feed retention on SQLite and PostgreSQL with an injected clock: the service's pruning timer deletes events
 * past `FEED_RETENTION_DAYS`, and a cursor past retention answers 410 `cursor_expired` before and after.
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  api,
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

const DAY = 86_400_000

/** Polls `check` until it holds (the pruning timer runs every second here). */
async function eventually(check: () => Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.each(backends)('feed pruning on %s', (name, backend) => {
  let test: TestRegistry
  let site: Site
  let key: string
  let clock = Date.parse('2026-03-01T00:00:00Z')

  beforeAll(async () => {
    if (!backend) return
    site = await startSite()
    site.serveJson('/.well-known/adagents.json', {
      properties: [
        {
          property_id: 'p',
          property_type: 'website',
          name: 'P',
          identifiers: [{ type: 'domain', value: 'later.test' }],
        },
      ],
      authorized_agents: [
        {
          url: 'https://sales.later.test/mcp',
          authorized_for: 'all',
          authorization_type: 'property_ids',
          property_ids: ['p'],
        },
      ],
    })
    test = await startTestRegistry(backend, {
      now: () => clock,
      origins: { 'later.test': site.origin },
      env: { FEED_RETENTION_DAYS: '2', FEED_PRUNE_INTERVAL_SECONDS: '1' },
    })
    key = (await test.registry.createOrg('Pruner')).apiKey
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await site?.close()
  })

  const feed = (query = '') =>
    api(test.registry, 'getRegistryFeed', `/api/registry/feed${query}`, { token: key })
  const stored = async () =>
    (await api(test.registry, 'getRegistryStats', '/api/registry/stats')).body.feed_events as number

  it.skipIf(!backend)(
    `drops events past retention and keeps answering 410 for old cursors (${name})`,
    async () => {
      const first = await feed('?limit=1')
      expect(first.body.events).toHaveLength(1)
      const oldCursor: string = first.body.cursor
      const seeded = await stored()
      expect(seeded).toBeGreaterThan(1)

      // A day later nothing is past retention: the timer keeps every event and the cursor works.
      clock += 1 * DAY
      expect(await test.registry.pruneFeed()).toBe(0)
      expect((await feed(`?cursor=${oldCursor}`)).status).toBe(200)

      // Three days after seeding: the cursor is past retention at once, and the timer deletes the events.
      clock += 2 * DAY
      expect(await feed(`?cursor=${oldCursor}`)).toMatchObject({
        status: 410,
        body: { error: 'cursor_expired' },
      })
      await eventually(async () => (await stored()) === 0)
      expect((await feed(`?cursor=${oldCursor}`)).status).toBe(410)
      expect((await feed()).body).toMatchObject({ events: [], cursor: null, has_more: false })

      // New events after the prune are served and their cursors work.
      expect(
        (await api(test.registry, 'resolveProperty', '/api/properties/resolve?domain=later.test')).status,
      ).toBe(200)
      const fresh = await feed()
      expect(fresh.body.events.length).toBeGreaterThan(0)
      expect((await feed(`?cursor=${fresh.body.cursor}`)).body).toMatchObject({ events: [], has_more: false })
      expect(await stored()).toBe(fresh.body.events.length)
    },
  )
})

if (!postgresUrl) console.warn('feed pruning on postgres skipped: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)')
