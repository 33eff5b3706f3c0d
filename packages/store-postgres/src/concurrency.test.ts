import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('PostgreSQL stores under concurrency (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgreSQL stores under concurrency', () => {
    const schema = freshSchemaName()
    let stores: PostgresStores
    let others: PostgresStores[]
    beforeAll(async () => {
      stores = await openPostgresStores({ connectionString: url, schema })
      // Other instances: each on its own pool, as separate services would be.
      others = await Promise.all(
        [1, 2, 3].map(() => openPostgresStores({ connectionString: url, schema, maxConnections: 4 })),
      )
    })
    afterAll(async () => {
      await Promise.all([stores, ...others].map((handle) => handle?.close()))
      await dropSchema(url, schema)
    })

    it('hands each due outbox entry to exactly one of several concurrent leasers (SKIP LOCKED)', async () => {
      const destination = 'registration-lease-race'
      const ids = Array.from({ length: 300 }, (_, index) => `entry-${index}`)
      for (const id of ids) {
        await stores.outbox.enqueue({
          id,
          destination,
          url: 'https://buyer.example/webhooks',
          idempotencyKey: `idem-${id}`.padEnd(24, 'x'),
          body: '{}',
          headers: {},
          coalesceKey: null,
          createdAt: 1_000,
          nextAttemptAt: 1_000,
          deadlineAt: 90_000,
        })
      }
      const leasers = [stores, ...others].flatMap((handle) => [handle, handle])
      const leased = await Promise.all(
        leasers.map(async (handle) => {
          const mine: { id: string; fence: string }[] = []
          for (;;) {
            const batch = await handle.outbox.lease(1_000, 7, 60)
            if (batch.length === 0) return mine
            mine.push(...batch.map((entry) => ({ id: entry.id, fence: entry.fence })))
          }
        }),
      )
      const all = leased.flat().map((entry) => entry.id)
      expect(all.length).toBe(ids.length)
      expect(new Set(all).size).toBe(ids.length)
      expect(leased.filter((mine) => mine.length > 0).length).toBeGreaterThan(1)
      // Every fence works once, for its own entry only.
      const [first, second] = leased.flat()
      expect(
        await others[1]!.outbox.record(
          first!.id,
          second!.fence,
          { kind: 'delivered', httpStatus: 200 },
          1_001,
        ),
      ).toBe(false)
      expect(
        await others[1]!.outbox.record(
          first!.id,
          first!.fence,
          { kind: 'delivered', httpStatus: 200 },
          1_001,
        ),
      ).toBe(true)
      expect(
        await stores.outbox.record(first!.id, first!.fence, { kind: 'delivered', httpStatus: 200 }, 1_002),
      ).toBe(false)
    })

    it('keeps the later of two racing coalesced enqueues', async () => {
      const destination = 'registration-coalesce-race'
      for (let round = 0; round < 10; round += 1) {
        const make = (id: string) => ({
          id,
          destination,
          url: 'https://buyer.example/webhooks',
          idempotencyKey: `idem-${id}`.padEnd(24, 'x'),
          body: '{}',
          headers: {},
          coalesceKey: `media_buy:${round}`,
          createdAt: 1_000,
          nextAttemptAt: 9_000,
          deadlineAt: 90_000,
        })
        await Promise.all(
          [stores, ...others].map((handle, index) =>
            handle.outbox.enqueue(make(`coalesce-${round}-${index}`)),
          ),
        )
        const pending = (await stores.outbox.pending(destination)).filter(
          (entry) => entry.coalesceKey === `media_buy:${round}`,
        )
        expect(pending).toHaveLength(1)
      }
    })

    it('holds the per-scope claim cap and the per-keyid replay cap under concurrent writers, within the bound', async () => {
      // Caps below 1,024 read the key's sum on every insert, which sees committed rows and the writer's own: a
      // cap is passed only by inserts of transactions open at the same moment, at most one fewer than the
      // connections (10 + 3 x 4 here), and never refused below it. Sequential writers are exact (the contract).
      const connections = 10 + 3 * 4
      const handles = [stores, ...others]
      const claims = await Promise.all(
        Array.from({ length: 60 }, (_, index) =>
          handles[index % handles.length]!.claims.claim({
            namespace: 'request',
            scope: 'capped-principal',
            key: `k-${index}`,
            fingerprint: 'a'.repeat(64),
            now: 1_000,
            leaseSeconds: 30,
            retentionSeconds: 100,
            maxPerScope: 10,
          }),
        ),
      )
      const claimed = claims.filter((result) => result.kind === 'claimed').length
      expect(claimed).toBeGreaterThanOrEqual(10)
      expect(claimed).toBeLessThanOrEqual(10 + connections - 1)
      expect(claims.filter((result) => result.kind === 'capacity')).toHaveLength(60 - claimed)
      const claimRows = await queryOnce<{ count: number }>(
        url,
        `SELECT count(*)::int AS count FROM "${schema}".claims WHERE scope = 'capped-principal'`,
      )
      expect(claimRows).toEqual([{ count: claimed }])
      // Once the writers are done, the next one is refused.
      expect(
        await stores.claims.claim({
          namespace: 'request',
          scope: 'capped-principal',
          key: 'k-late',
          fingerprint: 'a'.repeat(64),
          now: 1_000,
          leaseSeconds: 30,
          retentionSeconds: 100,
          maxPerScope: 10,
        }),
      ).toEqual({ kind: 'capacity' })

      const remembered = await Promise.all(
        Array.from({ length: 60 }, (_, index) =>
          handles[index % handles.length]!.replay.remember('capped-kid', `n-${index}`, 1_100, 10, 1_000),
        ),
      )
      const stored = remembered.filter((outcome) => outcome === 'stored').length
      expect(stored).toBeGreaterThanOrEqual(10)
      expect(stored).toBeLessThanOrEqual(10 + connections - 1)
      expect(remembered.filter((outcome) => outcome === 'capacity')).toHaveLength(60 - stored)
      expect(await stores.replay.remember('capped-kid', 'n-late', 1_100, 10, 1_000)).toBe('capacity')
      expect(await others[2]!.replay.atCapacity('capped-kid', 10, 1_099)).toBe(true)
      // Once they expire the room is back, with or without a sweep in between.
      expect(await others[2]!.replay.atCapacity('capped-kid', 10, 1_100)).toBe(false)
      expect(await stores.replay.remember('capped-kid', 'after', 1_400, 10, 1_100)).toBe('stored')
    })

    it('keeps every counter equal to the rows it counts through sweeps and lazy expiry', async () => {
      for (let index = 0; index < 30; index += 1) {
        await stores.replay.remember('sweep-kid', `n-${index}`, 2_000 + index, 1_000_000, 1_900)
        await others[0]!.claims.claim({
          namespace: 'webhook',
          scope: `sweep-scope-${index % 3}`,
          key: `k-${index}`,
          fingerprint: 'b'.repeat(64),
          now: 1_900,
          leaseSeconds: 30,
          retentionSeconds: 100 + index,
        })
      }
      // Since migration 6 expired rows go with their generation's partition: sweeps in the current generation
      // drop nothing (and, at the caps, writers delete their key's expired rows, as before).
      const swept = await Promise.all([stores.sweep(2_015), others[1]!.sweep(2_015), others[2]!.sweep(2_015)])
      const total = (key: 'claims' | 'replay') => swept.reduce((sum, counts) => sum + counts[key], 0)
      expect(total('replay')).toBe(0)
      expect(total('claims')).toBe(0)
      expect(await stores.replay.remember('sweep-kid', 'n-3', 2_100, 1_000_000, 2_015)).toBe('stored')
      expect(await stores.replay.remember('sweep-kid', 'n-29', 2_100, 1_000_000, 2_015)).toBe('replayed')
      const mismatches = await queryOnce(
        url,
        `SELECT s.namespace, s.scope FROM "${schema}".claim_scope_counts s GROUP BY s.namespace, s.scope
          HAVING sum(s.records) <> (SELECT count(*) FROM "${schema}".claims c WHERE c.namespace = s.namespace AND c.scope = s.scope)
         UNION ALL
         SELECT 'replay', k.keyid FROM "${schema}".replay_key_counts k GROUP BY k.keyid
          HAVING sum(k.entries) <> (SELECT count(*) FROM "${schema}".replay_nonces n WHERE n.keyid = k.keyid)`,
      )
      expect(mismatches).toEqual([])
      const live = await queryOnce<{ count: number }>(
        url,
        `SELECT count(*)::int AS count FROM "${schema}".replay_nonces WHERE keyid = 'sweep-kid' AND expires_at > 2015`,
      )
      expect(live).toEqual([{ count: 15 }])
    })

    it('lets sweeps race capped writers without deadlocks or counter drift', async () => {
      const handles = [stores, ...others]
      for (let round = 0; round < 8; round += 1) {
        const now = 10_000 + round * 10
        const work: Promise<unknown>[] = handles.map((handle) => handle.sweep(now))
        for (let index = 0; index < 40; index += 1) {
          const handle = handles[index % handles.length]!
          work.push(
            handle.claims.claim({
              namespace: 'webhook',
              scope: `race-scope-${index % 4}`,
              key: `r${round}-${index}`,
              fingerprint: 'c'.repeat(64),
              now,
              leaseSeconds: 5,
              retentionSeconds: 15,
              maxPerScope: 12,
            }),
            handle.replay.remember(`race-kid-${index % 2}`, `r${round}-${index}`, now + 15, 25, now),
          )
        }
        await Promise.all(work)
      }
      const drift = await queryOnce(
        url,
        `SELECT s.scope FROM "${schema}".claim_scope_counts s GROUP BY s.namespace, s.scope
          HAVING sum(s.records) <> (SELECT count(*) FROM "${schema}".claims c WHERE c.namespace = s.namespace AND c.scope = s.scope)
         UNION ALL
         SELECT k.keyid FROM "${schema}".replay_key_counts k GROUP BY k.keyid
          HAVING sum(k.entries) <> (SELECT count(*) FROM "${schema}".replay_nonces n WHERE n.keyid = k.keyid)`,
      )
      expect(drift).toEqual([])
      // The cap (12) passed at most by the inserts of transactions open at once (22 connections).
      const overCap = await queryOnce(
        url,
        `SELECT scope FROM "${schema}".claims WHERE scope LIKE 'race-scope-%' AND expires_at > 10085 GROUP BY scope HAVING count(*) > ${12 + 22 - 1}`,
      )
      expect(overCap).toEqual([])
    })
  })
}
