/**
 * The sender's end-of-buy firing rules on PostgreSQL: two senders on one schema through separate pools (as
 * two processes) and a sender restarted on the same schema. A fresh schema per test, dropped afterwards.
 */
import { describeSenderFinalRules } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { describe, it } from 'vitest'
import { openPostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('sender firing rules on postgres (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describeSenderFinalRules('postgres', async () => {
    const schema = freshSchemaName()
    let stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 4 })
    const peer = await openPostgresStores({ connectionString: url, schema, maxConnections: 4 })
    return {
      outbox: stores.outbox,
      peer: peer.outbox,
      restart: async () => {
        await stores.close()
        await peer.close()
        stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 4 })
        return stores.outbox
      },
      close: async () => {
        await stores.close()
        await peer.close()
        await dropSchema(url, schema)
      },
    }
  })
}
