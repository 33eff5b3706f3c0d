/**
 * Feed visibility order: events become visible to readers only in id order, so a strictly-after cursor never
 * skips one. On PostgreSQL, eight registry instances (each its own pool) on one schema append concurrently
 * through the real repository, each transaction pausing between its feed append and its commit, while a
 * ninth instance tails the feed with its cursor; the reader must see every event exactly once, in id order.
 * On both databases, an event appended by an instance whose clock is behind the newest stored event still
 * gets a greater id.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import type { DatabaseConfig } from './env.js'
import type { FeedEvent, PublisherSnapshot } from './domain/types.js'
import type { SqlDriver } from '@adwire/sql'
import { createRepository, openRepository, type RegistryRepository } from './db/repository.js'
import { dropSchema } from './testing/registry.js'

const postgresUrl = await resolveTestPostgresUrl()
const folder = mkdtempSync(join(tmpdir(), 'adwire-registry-feed-order-'))
const schema = `registry_order_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
const postgres: DatabaseConfig | undefined = postgresUrl
  ? { kind: 'postgres', connectionString: postgresUrl, schema }
  : undefined

afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  if (postgresUrl) await dropSchema(postgresUrl, schema)
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A one-property publisher whose property is called `name` (each rename is a feed transaction). */
function snapshot(domain: string, name: string): PublisherSnapshot {
  return {
    publisher: {
      domain,
      source: 'adagents_json',
      valid: true,
      url: `https://${domain}/.well-known/adagents.json`,
      discovery_method: 'direct',
    },
    properties: [
      {
        publisher_domain: domain,
        property_id: 'p1',
        property_type: 'website',
        name,
        identifiers: [{ type: 'domain', value: `www.${domain}` }],
        tags: [],
        source: 'adagents_json',
      },
    ],
    authorizations: [],
  }
}

/** The same driver, but every transaction waits a little after its work (feed append included) before committing. */
function slowCommits(driver: SqlDriver): SqlDriver {
  return {
    ...driver,
    transaction: (work) =>
      driver.transaction(async (tx) => {
        const result = await work(tx)
        await sleep(Math.random() * 12)
        return result
      }),
  }
}

describe('feed order with concurrent instances on one PostgreSQL schema', () => {
  const WRITERS = 8
  const ROUNDS = 12

  it.skipIf(!postgres)('lets a polling reader see every event exactly once, in id order', async () => {
    const instances: RegistryRepository[] = []
    try {
      for (let index = 0; index <= WRITERS; index += 1)
        instances.push((await openRepository(postgres!)).repository)
      const [reader, ...writers] = instances as [RegistryRepository, ...RegistryRepository[]]
      const since = new Date(0).toISOString()

      const written: FeedEvent[] = []
      let writing = true
      const writersDone = Promise.all(
        writers.map(async (instance, writer) => {
          const repository = createRepository(slowCommits(instance.driver))
          // Clocks disagree by up to 3.5 s between instances.
          const skew = -writer * 500
          for (let round = 0; round < ROUNDS; round += 1)
            written.push(
              ...(await repository.publishers.saveSnapshot(
                snapshot(`w${writer}.order.test`, `Name ${round}`),
                'test',
                Date.now() + skew,
              )),
            )
        }),
      ).finally(() => {
        writing = false
      })

      const seen: FeedEvent[] = []
      let cursor: string | undefined
      const poll = async () => {
        const page = await reader.feed.eventsAfter({
          ...(cursor ? { after: cursor } : {}),
          since,
          limit: 50,
        })
        seen.push(...page)
        if (page.length > 0) cursor = page.at(-1)!.event_id
        return page.length
      }
      while (writing) await poll()
      await writersDone
      while ((await poll()) > 0);

      // Each round writes a publisher event and a property event.
      expect(written).toHaveLength(WRITERS * ROUNDS * 2)
      const ids = seen.map((event) => event.event_id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids).toEqual([...ids].sort())
      expect([...ids].sort()).toEqual(written.map((event) => event.event_id).sort())
    } finally {
      await Promise.all(instances.map((instance) => instance.close()))
    }
  })
})

const backends: Array<[string, DatabaseConfig | undefined]> = [
  ['sqlite', { kind: 'sqlite', path: join(folder, 'order.sqlite') }],
  ['postgres', postgres],
]

describe.each(backends)('feed ids on %s', (name, config) => {
  it.skipIf(!config)(
    `stay above the newest stored id when this instance's clock is behind (${name})`,
    async () => {
      const { repository } = await openRepository(config!)
      try {
        // Another instance, its clock an hour ahead, wrote the newest event: its id carries that hour.
        const ahead = Date.now() + 3_600_000
        const foreign = `${ahead
          .toString(16)
          .padStart(12, '0')
          .replace(/^(.{8})(.{4})$/, '$1-$2')}-7fff-bfff-ffffffffffff`
        await repository.driver.run(
          `INSERT INTO registry_feed_events (event_id, event_type, entity_type, entity_id, payload, actor, created_at)
           VALUES (?, 'publisher.adagents_changed', 'publisher', 'fast.test', '{}', 'test', ?)`,
          [foreign, new Date(ahead).toISOString()],
        )
        const events = await repository.publishers.saveSnapshot(
          snapshot('slow.order.test', 'Slow'),
          'test',
          Date.now(),
        )
        expect(events.length).toBeGreaterThan(1)
        for (const event of events) {
          expect(event.event_id > foreign).toBe(true)
          expect(event.event_id).toMatch(
            /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
          )
        }
        const ids = events.map((event) => event.event_id)
        expect(ids).toEqual([...ids].sort())
        const after = await repository.feed.eventsAfter({
          after: foreign,
          since: new Date(0).toISOString(),
          limit: 100,
        })
        expect(after.map((event) => event.event_id)).toEqual(ids)
      } finally {
        await repository.close()
      }
    },
  )
})
