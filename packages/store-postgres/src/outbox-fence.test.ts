/**
 * The outbox's fence names the entry's destination (`<uuid>:<destination>`), so that `record` names the
 * distribution key of a Citus deployment; a fence leased by an earlier release (a bare UUID) still records,
 * and a fence naming another destination records nothing.
 */
import { outboxEntry } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('PostgreSQL outbox fences (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgreSQL outbox fences', () => {
    const schema = freshSchemaName()
    let stores: PostgresStores
    beforeAll(async () => {
      stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 2 })
    })
    afterAll(async () => {
      await stores.close()
      await dropSchema(url, schema)
    })

    const enqueue = (id: string, destination: string) =>
      stores.outbox.enqueue(outboxEntry(destination, { id, url: `https://${destination}.example/webhooks` }))

    it('names the destination in the fence; another destination in it records nothing', async () => {
      await enqueue('fenced', 'buyer:one')
      const [entry] = await stores.outbox.lease(1_000, 10, 60)
      expect(entry?.fence).toMatch(/^[0-9a-f-]{36}:buyer:one$/)
      const forged = `${entry!.fence.slice(0, 37)}buyer:two`
      expect(
        await stores.outbox.record('fenced', forged, { kind: 'delivered', httpStatus: 200 }, 1_001),
      ).toBe(false)
      expect(
        await stores.outbox.record('fenced', entry!.fence, { kind: 'delivered', httpStatus: 200 }, 1_001),
      ).toBe(true)
      expect(await stores.outbox.activity('buyer:one')).toHaveLength(1)
    })

    it('records an entry leased with a bare UUID fence (an earlier release)', async () => {
      await enqueue('legacy', 'buyer-legacy')
      const fence = crypto.randomUUID()
      await stores.pool.query(
        `UPDATE "${schema}".outbox SET fence = $1, lease_until = 1060 WHERE id = 'legacy'`,
        [fence],
      )
      expect(await stores.outbox.record('legacy', fence, { kind: 'delivered', httpStatus: 200 }, 1_001)).toBe(
        true,
      )
      expect(await stores.outbox.pending('buyer-legacy')).toEqual([])
    })
  })
}
