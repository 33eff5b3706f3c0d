/**
 * Migrations 2 and 3 are additive: a schema written by migration 1 opens, what it holds stays valid, and the
 * claims it holds are decided by the inbox's functions (migration 3). Migration 4 moves the per-key counters
 * into per-backend stripes: what version 3 counted is kept.
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

if (!url) {
  describe.skip('upgrading a version 1 schema (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('upgrading a version 1 schema', () => {
    it('keeps its pending outbox entries deliverable, concerning no media buy and blocking nothing', async () => {
      const schema = freshSchemaName()
      const quoted = `"${schema}"`
      try {
        await schemaAtVersion(url, schema, 1)
        await queryOnce(
          url,
          `SELECT o_outcome FROM ${quoted}.claim('webhook', 'seller', 'idem-old', $1, 'fence-old', 1000, 30, 86400, NULL)`,
          ['f'.repeat(64)],
        )
        await queryOnce(
          url,
          `INSERT INTO ${quoted}.outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at)
           VALUES ('old', 'registration', 'https://buyer.example/hook', 'idem-old-0123456789', '{}', '{}', 'media_buy:["mb_1","k"]', 1000, 1000, 2000)`,
        )

        const stores = await openPostgresStores({ connectionString: url, schema })
        try {
          const versions = await queryOnce<{ version: number }>(
            url,
            `SELECT version FROM ${quoted}.schema_migrations ORDER BY version`,
          )
          expect(versions.at(-1)?.version).toBe(SCHEMA_VERSION)
          expect(await stores.outbox.pending()).toEqual([
            expect.objectContaining({ id: 'old', mediaBuyIds: [], barrier: false, attempts: 0 }),
          ])
          expect(await stores.outbox.closedMediaBuys(['mb_1'])).toEqual([])
          await stores.outbox.enqueue({
            id: 'final',
            destination: 'reports',
            url: 'https://buyer.example/reports',
            idempotencyKey: 'idem-final-0123456789',
            body: '{}',
            headers: {},
            coalesceKey: null,
            createdAt: 1_000,
            nextAttemptAt: 1_000,
            deadlineAt: 2_000,
            mediaBuyIds: ['mb_1'],
            barrier: true,
          })
          // The old entry names no buy: the final report of mb_1 does not wait for it.
          expect((await stores.outbox.lease(1_000, 10, 60)).map((entry) => entry.id)).toEqual([
            'old',
            'final',
          ])
          expect(await stores.outbox.closedMediaBuys(['mb_1'])).toEqual(['mb_1'])

          // A delivery in flight before the upgrade is in flight for the inbox too, and taken over after its lease.
          const events: string[] = []
          const inbox = stores.createInbox({ write: async (event) => void events.push(event.idempotencyKey) })
          const delivery = {
            claim: {
              namespace: 'webhook' as const,
              scope: 'seller',
              key: 'idem-old',
              fingerprint: 'f'.repeat(64),
              now: 1_010,
              leaseSeconds: 30,
              retentionSeconds: 86_400,
            },
            event: {
              registrationId: 'upgrade',
              sender: 'seller',
              shape: 'mcp' as const,
              idempotencyKey: 'idem-old',
              terminal: false,
              data: null,
              payload: {},
              body: new Uint8Array(),
              receivedAt: 1_010,
            },
          }
          expect(await inbox.accept(delivery)).toEqual({
            kind: 'claim',
            claim: { kind: 'processing', leaseExpiresAt: 1_030 },
          })
          expect(await inbox.accept({ ...delivery, claim: { ...delivery.claim, now: 1_030 } })).toMatchObject(
            { kind: 'published', event: { takeover: true } },
          )
          expect(events).toEqual(['idem-old'])
        } finally {
          await stores.close()
        }
      } finally {
        await dropSchema(url, schema)
      }
    })

    it('moves the counters of a version 3 schema into stripes: replays, caps and sweeps hold across the upgrade', async () => {
      const schema = freshSchemaName()
      const quoted = `"${schema}"`
      try {
        await schemaAtVersion(url, schema, 3)
        // Version 3's functions fill its counters: 3 nonces of one keyid (one expiring at 1_050), 3 claims of
        // one scope.
        for (const [nonce, expires] of [
          ['n1', 1_050],
          ['n2', 1_400],
          ['n3', 1_400],
        ] as const) {
          await queryOnce(url, `SELECT ${quoted}.remember_nonce('kid-old', $1, $2, 4, 1000)`, [
            nonce,
            expires,
          ])
        }
        for (const key of ['c1', 'c2', 'c3']) {
          await queryOnce(
            url,
            `SELECT o_outcome FROM ${quoted}.claim('webhook', 'seller-old', $1, $2, 'fence', 1000, 30, 500, 4)`,
            [key, 'f'.repeat(64)],
          )
        }

        const stores = await openPostgresStores({ connectionString: url, schema, now: () => 1_000 })
        try {
          const counts = await queryOnce<{ what: string; total: string }>(
            url,
            `SELECT 'replay' AS what, sum(entries)::text AS total FROM ${quoted}.replay_key_counts WHERE keyid = 'kid-old'
             UNION ALL
             SELECT 'claims', sum(records)::text FROM ${quoted}.claim_scope_counts WHERE scope = 'seller-old'`,
          )
          expect(counts).toEqual([
            { what: 'replay', total: '3' },
            { what: 'claims', total: '3' },
          ])
          expect(await queryOnce(url, `SELECT to_regclass('${quoted}.replay_keyids') AS old`)).toEqual([
            { old: null },
          ])
          // A nonce stored before the upgrade is still a replay; the cap (4) counts the rows from before.
          expect(await stores.replay.remember('kid-old', 'n2', 1_400, 4, 1_010)).toBe('replayed')
          expect(await stores.replay.remember('kid-old', 'n4', 1_400, 4, 1_010)).toBe('stored')
          expect(await stores.replay.remember('kid-old', 'n5', 1_400, 4, 1_010)).toBe('capacity')
          // n1 has expired by 1_060: at the cap its row makes room.
          expect(await stores.replay.remember('kid-old', 'n5', 1_400, 4, 1_060)).toBe('stored')
          const claim = (key: string) => ({
            namespace: 'webhook' as const,
            scope: 'seller-old',
            key,
            fingerprint: 'f'.repeat(64),
            now: 1_010,
            leaseSeconds: 30,
            retentionSeconds: 500,
            maxPerScope: 4,
          })
          expect(await stores.claims.claim(claim('c1'))).toEqual({
            kind: 'processing',
            leaseExpiresAt: 1_030,
          })
          expect(await stores.claims.claim(claim('c4'))).toMatchObject({ kind: 'claimed' })
          expect(await stores.claims.claim(claim('c5'))).toEqual({ kind: 'capacity' })
          // Since migration 6 the rows go with their generation: once it is rotated (its six hours over, the
          // stores having opened at 1_000) and its rows have all expired, it is dropped whole, with its counters.
          expect(await stores.sweep(1_600)).toMatchObject({ claims: 0, replay: 0 })
          expect(await stores.sweep(1_000 + 21_600)).toMatchObject({ claims: 4, replay: 4 })
          const drift = await queryOnce(
            url,
            `SELECT s.scope FROM ${quoted}.claim_scope_counts s GROUP BY s.namespace, s.scope
              HAVING sum(s.records) <> (SELECT count(*) FROM ${quoted}.claims c WHERE c.namespace = s.namespace AND c.scope = s.scope)
             UNION ALL
             SELECT k.keyid FROM ${quoted}.replay_key_counts k GROUP BY k.keyid
              HAVING sum(k.entries) <> (SELECT count(*) FROM ${quoted}.replay_nonces n WHERE n.keyid = k.keyid)`,
          )
          expect(drift).toEqual([])
        } finally {
          await stores.close()
        }
      } finally {
        await dropSchema(url, schema)
      }
    })
  })
}
