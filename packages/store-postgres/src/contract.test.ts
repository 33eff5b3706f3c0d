import { describeStoreContract } from '@adwire/store-contract'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { describe, it } from 'vitest'
import { openPostgresStores } from './open.js'
import { dropSchema, freshSchemaName } from './testing/schemas.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('store contract: postgres (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describeStoreContract('postgres', ['claims', 'convergence', 'outbox', 'replay'], async () => {
    const schema = freshSchemaName()
    const stores = await openPostgresStores({ connectionString: url, schema })
    // The peer runs on a pool of its own, as another instance of the service would.
    const peerPool = new pg.Pool({ connectionString: url, max: 5 })
    const peer = await openPostgresStores({ pool: peerPool, schema })
    return {
      claims: stores.claims,
      convergence: stores.convergence,
      outbox: stores.outbox,
      replay: stores.replay,
      peer: { claims: peer.claims, convergence: peer.convergence, outbox: peer.outbox, replay: peer.replay },
      async close() {
        await peer.close()
        await peerPool.end()
        await stores.close()
        await dropSchema(url, schema)
      },
    }
  })
}
