/**
 * Migration 5 in place: a schema written by migrations 1 to 4, with rows in every table, opens as partitioned
 * tables; its rows are kept and found (pending entries leased in order behind their media buy's barrier,
 * activity rows listed before new ones, old ids still taken, claims and nonces decided as before), in
 * partitions of their ranges created by the migration, which are dropped whole once past and finished.
 */
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { outboxEntry } from '@adwire/store-contract'
import { describe, expect, it } from 'vitest'
import { SCHEMA_VERSION } from './migrations.js'
import { openPostgresStores } from './open.js'
import { schemaAtVersion } from './test-support.js'

const url = await resolveTestPostgresUrl()
/** A day's start on the simulated clock. */
const T = 1_799_971_200

describe.skipIf(!url)('upgrading a version 4 schema to time partitions', () => {
  it('keeps every row of every table, found as before, in the partitions of its time', async () => {
    const schema = freshSchemaName()
    const quoted = `"${schema}"`
    try {
      await schemaAtVersion(url!, schema, 4)
      // Version 4's rows: a nonce, a claim, a terminal record, two pending entries of one media buy (the second
      // its final report), a delivered one with its activity row, and the buy's pending rows and closing.
      await queryOnce(url!, `SELECT ${quoted}.remember_nonce('kid-old', 'n1', $1, NULL, $2)`, [T + 300, T])
      await queryOnce(
        url!,
        `SELECT o_outcome FROM ${quoted}.claim('webhook', 'seller-old', 'c1', $1, 'fence', $2, 30, 86400, NULL)`,
        ['f'.repeat(64), T],
      )
      await queryOnce(
        url!,
        `INSERT INTO ${quoted}.terminals (sender, task_id, comparison, state, owner, lease_until, expires_at)
         VALUES ('seller-old', 'task-1', 'cmp', 'published', 'c1', $1, $2)`,
        [T + 30, T + 172_800],
      )
      const insert = `INSERT INTO ${quoted}.outbox (id, destination, url, idempotency_key, body, headers, coalesce_key,
          created_at, next_attempt_at, deadline_at, state, attempts, media_buy_ids, barrier)
        VALUES ($1, 'buyer', 'https://buyer.example/hook', $1 || '-idempotency-key-0000', '{}', '{}', NULL, $2, $2, $3, $4, $5, $6::text[], $7)
        RETURNING seq`
      const [first] = await queryOnce<{ seq: string }>(url!, insert, [
        'first',
        T,
        T + 3_600,
        'pending',
        0,
        ['mb_1'],
        false,
      ])
      const [final] = await queryOnce<{ seq: string }>(url!, insert, [
        'final',
        T,
        T + 3_600,
        'pending',
        0,
        ['mb_1'],
        true,
      ])
      await queryOnce(url!, insert, ['sent', T - 100, T + 3_500, 'delivered', 1, [], false])
      await queryOnce(
        url!,
        `INSERT INTO ${quoted}.outbox_media_buys (media_buy_id, entry_seq) VALUES ('mb_1', $1), ('mb_1', $2)`,
        [first!.seq, final!.seq],
      )
      await queryOnce(
        url!,
        `INSERT INTO ${quoted}.media_buys_closed (media_buy_id, closed_at, entry_id) VALUES ('mb_1', $1, 'final')`,
        [T],
      )
      await queryOnce(
        url!,
        `INSERT INTO ${quoted}.webhook_activity (destination, idempotency_key, status, http_status_code, attempt, error_message, at)
         VALUES ('buyer', 'sent-idempotency-key-0000', 'success', 200, 1, NULL, $1)`,
        [T - 50],
      )

      const stores = await openPostgresStores({ connectionString: url!, schema, now: () => T })
      try {
        const versions = await queryOnce<{ version: number }>(
          url!,
          `SELECT max(version)::int AS version FROM ${quoted}.schema_migrations`,
        )
        expect(versions).toEqual([{ version: SCHEMA_VERSION }])
        const partitioned = await queryOnce<{ name: string }>(
          url!,
          `SELECT c.relname AS name FROM pg_partitioned_table t JOIN pg_class c ON c.oid = t.partrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1`,
          [schema],
        )
        expect(partitioned.map((row) => row.name)).toEqual([
          'claim_scope_counts',
          'claims',
          'outbox',
          'replay_key_counts',
          'replay_nonces',
          'terminals',
          'webhook_activity',
        ])
        // The rows went into partitions of their ranges, created by the migration.
        expect(
          await queryOnce(url!, `SELECT idempotency_key FROM ${quoted}."webhook_activity_p${T - 86_400}"`),
        ).toEqual([{ idempotency_key: 'sent-idempotency-key-0000' }])
        expect(await queryOnce(url!, `SELECT id FROM ${quoted}."outbox_p${T}" ORDER BY seq`)).toEqual([
          { id: 'first' },
          { id: 'final' },
          { id: 'sent' },
        ])
        expect(await queryOnce(url!, `SELECT count(*)::int AS n FROM ${quoted}.outbox_default`)).toEqual([
          { n: 0 },
        ])

        expect((await stores.outbox.pending()).map((entry) => entry.id)).toEqual(['first', 'final'])
        expect(await stores.outbox.closedMediaBuys(['mb_1'])).toEqual(['mb_1'])
        // An old entry's id is still taken.
        await expect(stores.outbox.enqueue(outboxEntry('buyer', { id: 'sent' }))).rejects.toMatchObject({
          code: 'store_duplicate_entry',
        })
        // The final report waits behind the buy's earlier entry, as before the upgrade.
        const leased = await stores.outbox.lease(T, 10, 30)
        expect(leased.map((entry) => entry.id)).toEqual(['first'])
        expect(
          await stores.outbox.record(
            'first',
            leased[0]!.fence,
            { kind: 'delivered', httpStatus: 200 },
            T + 1,
          ),
        ).toBe(true)
        const [finalLeased] = await stores.outbox.lease(T + 1, 10, 30)
        expect(finalLeased?.id).toBe('final')
        // Activity: the old row, then the new one (the identity goes on after the old rows).
        expect((await stores.outbox.activity('buyer')).map((row) => row.idempotency_key)).toEqual([
          'first-idempotency-key-0000',
          'sent-idempotency-key-0000',
        ])
        // Nothing else changed: the nonce is a replay, the claim in flight, the terminal record there.
        expect(await stores.replay.remember('kid-old', 'n1', T + 300, 10, T + 10)).toBe('replayed')
        expect(
          await stores.claims.claim({
            namespace: 'webhook',
            scope: 'seller-old',
            key: 'c1',
            fingerprint: 'f'.repeat(64),
            now: T + 10,
            leaseSeconds: 30,
            retentionSeconds: 86_400,
          }),
        ).toEqual({ kind: 'processing', leaseExpiresAt: T + 30 })
        expect(
          await queryOnce(
            url!,
            `SELECT state FROM ${quoted}.terminals WHERE sender = 'seller-old' AND task_id = 'task-1'`,
          ),
        ).toEqual([{ state: 'published' }])
        // Once every entry of the old partition is finished, it is dropped whole.
        expect(
          await stores.outbox.record(
            'final',
            finalLeased!.fence,
            { kind: 'delivered', httpStatus: 200 },
            T + 2,
          ),
        ).toBe(true)
        await stores.sweep(T + 6 * 3_600)
        expect(await queryOnce(url!, `SELECT to_regclass('${quoted}."outbox_p${T}"') AS partition`)).toEqual([
          { partition: null },
        ])
        expect(await stores.outbox.pending()).toEqual([])
      } finally {
        await stores.close()
      }
    } finally {
      await dropSchema(url!, schema)
    }
  })
})
