/**
 * Migrations 2 and 3 are additive: a schema written by migration 1 opens, what it holds stays valid, and the
 * claims it holds are decided by the inbox's functions (migration 3).
 */
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js'
import { openPostgresStores } from './open.js'

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
        await queryOnce(url, `CREATE SCHEMA ${quoted}`)
        await queryOnce(
          url,
          `CREATE TABLE ${quoted}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        )
        await queryOnce(url, MIGRATIONS[0]!.sql(quoted))
        await queryOnce(url, `INSERT INTO ${quoted}.schema_migrations (version, name) VALUES (1, 'initial')`)
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
  })
}
