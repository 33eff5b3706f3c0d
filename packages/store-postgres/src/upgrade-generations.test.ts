/**
 * Migration 6 in place: a schema at version 5 with live claims, terminal records, nonces and their counters
 * opens partitioned by generation; its rows are in generation 1 with their counters recomputed per key, replays
 * and duplicates are still detected, the caps count the rows from before, and generation 1 is dropped whole
 * once rotated and expired.
 */
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { describe, expect, it } from 'vitest'
import { SCHEMA_VERSION } from './migrations.js'
import { openPostgresStores } from './open.js'
import { schemaAtVersion } from './test-support.js'

const url = await resolveTestPostgresUrl()
const T = 1_800_000_000

describe.skipIf(!url)('upgrading a version 5 schema to generations', () => {
  it('keeps live claims, terminal records, nonces and counters: replays, duplicates and caps hold', async () => {
    const schema = freshSchemaName()
    try {
      const quoted = await schemaAtVersion(url!, schema, 5)
      // Version 5's functions write the rows and their striped counters: 3 nonces of one keyid (cap 3, one
      // expiring at T + 50), 2 claims of one scope (cap 2), one published terminal record.
      for (const [nonce, expires] of [
        ['n1', T + 50],
        ['n2', T + 300],
        ['n3', T + 300],
      ] as const) {
        expect(
          await queryOnce(url!, `SELECT ${quoted}.remember_nonce('kid-old', $1, $2, 3, $3) AS outcome`, [
            nonce,
            expires,
            T,
          ]),
        ).toEqual([{ outcome: 'stored' }])
      }
      for (const key of ['c1', 'c2']) {
        await queryOnce(
          url!,
          `SELECT o_outcome FROM ${quoted}.claim('webhook', 'seller-old', $1, $2, 'fence', $3, 30, 3600, 2)`,
          [key, 'f'.repeat(64), T],
        )
      }
      await queryOnce(
        url!,
        `UPDATE ${quoted}.claims SET state = 'completed', result = 'done' WHERE key = 'c2'`,
      )
      await queryOnce(
        url!,
        `INSERT INTO ${quoted}.terminals (sender, task_id, comparison, state, owner, lease_until, expires_at)
         VALUES ('seller-old', 'task-1', $1, 'published', 'c2', $2, $3)`,
        ['1'.repeat(64), T + 30, T + 3_600],
      )

      const stores = await openPostgresStores({ connectionString: url!, schema, now: () => T + 10 })
      try {
        expect(
          await queryOnce(url!, `SELECT max(version)::int AS version FROM ${quoted}.schema_migrations`),
        ).toEqual([{ version: SCHEMA_VERSION }])
        // Every row in generation 1, the counters recomputed on stripe 0 of generation 1.
        expect(
          await queryOnce(
            url!,
            `SELECT 'claims' AS what, count(*)::int AS n FROM ${quoted}.claims WHERE generation = 1
             UNION ALL SELECT 'nonces', count(*)::int FROM ${quoted}.replay_nonces WHERE generation = 1
             UNION ALL SELECT 'terminals', count(*)::int FROM ${quoted}.terminals WHERE generation = 1
             UNION ALL SELECT 'claim counters', sum(records)::int FROM ${quoted}.claim_scope_counts
                        WHERE generation = 1 AND stripe = 0 AND scope = 'seller-old'
             UNION ALL SELECT 'nonce counters', sum(entries)::int FROM ${quoted}.replay_key_counts
                        WHERE generation = 1 AND stripe = 0 AND keyid = 'kid-old'`,
          ),
        ).toEqual([
          { what: 'claims', n: 2 },
          { what: 'nonces', n: 3 },
          { what: 'terminals', n: 1 },
          { what: 'claim counters', n: 2 },
          { what: 'nonce counters', n: 3 },
        ])
        expect(await queryOnce(url!, `SELECT to_regclass('${quoted}.claims_v5') AS old`)).toEqual([
          { old: null },
        ])

        // Replays and the cap of the nonces from before.
        expect(await stores.replay.remember('kid-old', 'n2', T + 400, 3, T + 10)).toBe('replayed')
        expect(await stores.replay.atCapacity('kid-old', 3, T + 10)).toBe(true)
        expect(await stores.replay.remember('kid-old', 'n4', T + 400, 3, T + 10)).toBe('capacity')
        // n1 has expired by T + 60: at the cap its row makes room.
        expect(await stores.replay.remember('kid-old', 'n4', T + 400, 3, T + 60)).toBe('stored')
        expect(await stores.replay.remember('kid-old', 'n4', T + 400, 3, T + 61)).toBe('replayed')

        // Duplicates and the cap of the claims from before.
        const claim = (key: string, fingerprint = 'f') => ({
          namespace: 'webhook' as const,
          scope: 'seller-old',
          key,
          fingerprint: fingerprint.repeat(64),
          now: T + 10,
          leaseSeconds: 30,
          retentionSeconds: 3_600,
          maxPerScope: 2,
        })
        expect(await stores.claims.claim(claim('c1'))).toEqual({ kind: 'processing', leaseExpiresAt: T + 30 })
        expect(await stores.claims.claim(claim('c2'))).toEqual({ kind: 'completed', result: 'done' })
        expect(await stores.claims.claim(claim('c2', 'e'))).toEqual({ kind: 'conflict' })
        expect(await stores.claims.claim(claim('c3'))).toEqual({ kind: 'capacity' })
        // The terminal record from before decides its task.
        const observation = {
          sender: 'seller-old',
          taskId: 'task-1',
          terminal: true,
          deliveryKey: 'c9',
          now: T + 10,
          leaseSeconds: 30,
          retentionSeconds: 3_600,
        }
        expect(await stores.convergence.observe({ ...observation, comparison: '1'.repeat(64) })).toBe(
          'duplicate',
        )
        expect(await stores.convergence.observe({ ...observation, comparison: '2'.repeat(64) })).toBe(
          'conflict',
        )

        // Six hours on, generation 1 is rotated and, all expired, dropped whole: its keys are free again.
        const swept = await stores.sweep(T + 10 + 21_600)
        expect(swept).toMatchObject({ claims: 2, replay: 3 })
        expect(await stores.claims.claim({ ...claim('c2', 'e'), now: T + 21_610 })).toMatchObject({
          kind: 'claimed',
          takeover: false,
        })
        expect(
          await stores.convergence.observe({
            ...observation,
            comparison: '2'.repeat(64),
            now: T + 21_610,
          }),
        ).toBe('proceed')
        expect(await stores.replay.remember('kid-old', 'n2', T + 21_700, 3, T + 21_610)).toBe('stored')
      } finally {
        await stores.close()
      }
    } finally {
      await dropSchema(url!, schema)
    }
  })
})
