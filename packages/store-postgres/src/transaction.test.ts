/**
 * Caller transactions on PostgreSQL: an outbox enqueue made inside one commits or rolls back with the caller's
 * own statements on its connection; work outside it runs on the pool and is never rolled back with it; the
 * worker's lease never joins it.
 */
import { randomUUID } from 'node:crypto'
import { expectFinalRollbackReopens, outboxEntry } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

const entry = (destination: string) =>
  outboxEntry(destination, {
    url: 'https://buyer.example/hook',
    body: '{}',
    createdAt: 1,
    nextAttemptAt: 1,
    deadlineAt: 10_000_000_000,
    mediaBuyIds: ['mb_1'],
  })

if (!url) {
  describe.skip('caller transactions on postgres (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgresStores.transaction', () => {
    const schema = freshSchemaName()
    let stores: PostgresStores
    beforeAll(async () => {
      stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 4 })
      await stores.pool.query(
        `CREATE TABLE "${schema}".caller_state (id TEXT PRIMARY KEY, status TEXT NOT NULL)`,
      )
    })
    afterAll(async () => {
      await stores.close()
      await dropSchema(url, schema)
    })
    const write = (id: string, status: string) =>
      stores
        .connection()
        .query(
          `INSERT INTO "${schema}".caller_state (id, status) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status`,
          [id, status],
        )
    const stateOf = async (id: string) =>
      (
        await stores.pool.query<{ status: string }>(
          `SELECT status FROM "${schema}".caller_state WHERE id = $1`,
          [id],
        )
      ).rows[0]?.status

    it('commits the caller write and the enqueue together', async () => {
      const destination = randomUUID()
      await stores.transaction(async () => {
        await write('c1', 'paused')
        await stores.outbox.enqueue(entry(destination))
      })
      expect(await stateOf('c1')).toBe('paused')
      expect(await stores.outbox.pending(destination)).toHaveLength(1)
    })

    it('rolls both back when the body throws, and the rest of the pool never sees them', async () => {
      const destination = randomUUID()
      await expect(
        stores.transaction(async (client) => {
          await client.query(`INSERT INTO "${schema}".caller_state (id, status) VALUES ('r1', 'paused')`)
          await stores.outbox.enqueue(entry(destination))
          // Not committed yet: another connection does not see it.
          expect(await stores.outbox.pending(destination)).toHaveLength(1)
          const seen = await stores.pool.query(`SELECT 1 FROM "${schema}".outbox WHERE destination = $1`, [
            destination,
          ])
          expect(seen.rowCount).toBe(0)
          throw new Error('crash between the change and the answer')
        }),
      ).rejects.toThrow('crash between')
      expect(await stateOf('r1')).toBeUndefined()
      expect(await stores.outbox.pending(destination)).toHaveLength(0)
    })

    it('keeps work from outside the transaction out of it', async () => {
      const inside = randomUUID()
      const outside = randomUUID()
      let release!: () => void
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      const open = stores.transaction(async () => {
        await stores.outbox.enqueue(entry(inside))
        await held
        throw new Error('rolled back')
      })
      await stores.outbox.enqueue({ ...entry(outside), mediaBuyIds: [] })
      release()
      await expect(open).rejects.toThrow('rolled back')
      expect(await stores.outbox.pending(inside)).toHaveLength(0)
      expect(await stores.outbox.pending(outside)).toHaveLength(1)
    })

    it('never lets the worker lease join it (a rollback does not undo a lease)', async () => {
      const destination = randomUUID()
      await stores.outbox.enqueue({ ...entry(destination), mediaBuyIds: [], nextAttemptAt: 5 })
      let leased: Promise<{ destination: string }[]> | undefined
      await expect(
        stores.transaction(async () => {
          leased = stores.outbox.lease(6, 100, 60)
          await leased
          throw new Error('rolled back')
        }),
      ).rejects.toThrow('rolled back')
      expect((await leased!).some((row) => row.destination === destination)).toBe(true)
      const again = await stores.outbox.lease(6, 100, 60)
      expect(again.some((row) => row.destination === destination)).toBe(false)
    })

    it('leaves the buy open when the transaction that queued its final report rolls back', async () => {
      await expectFinalRollbackReopens(stores, 'mb_rolled_back')
    })

    it('joins an open transaction when nested', async () => {
      const destination = randomUUID()
      await expect(
        stores.transaction(async () => {
          await stores.transaction(async () => {
            await stores.outbox.enqueue(entry(destination))
          })
          throw new Error('outer rolls back the inner')
        }),
      ).rejects.toThrow('outer rolls back')
      expect(await stores.outbox.pending(destination)).toHaveLength(0)
    })
  })
}
