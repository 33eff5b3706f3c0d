import { describeStoreContract } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { describe, it } from 'vitest'
import { openPostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('store contract: postgres (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describeStoreContract('postgres', ['claims', 'convergence', 'outbox', 'replay', 'inbox'], async () => {
    const schema = freshSchemaName()
    const stores = await openPostgresStores({ connectionString: url, schema })
    // The inbox's writer stores rows in a table of the same schema, as the reference receiver does.
    const events = `"${schema}".contract_events`
    await stores.pool.query(
      `CREATE TABLE ${events} (scope text NOT NULL, key text NOT NULL, reemission boolean NOT NULL)`,
    )
    const keys = async (scope: string, reemitted: boolean) =>
      (
        await stores.pool.query<{ key: string }>(
          `SELECT key FROM ${events} WHERE scope = $1 AND (reemission OR NOT $2) ORDER BY key`,
          [scope, reemitted],
        )
      ).rows.map((row) => row.key)
    // The peer runs on a pool of its own, as another instance of the service would.
    const peerPool = new pg.Pool({ connectionString: url, max: 5 })
    const peer = await openPostgresStores({ pool: peerPool, schema })
    return {
      claims: stores.claims,
      convergence: stores.convergence,
      outbox: stores.outbox,
      replay: stores.replay,
      // Claims, terminal records and nonces go with their generation's partition (migration 6).
      expiresByPartition: true,
      async replayRows(keyid, now) {
        const { rows } = await stores.pool.query<{ stored: number; live: number }>(
          `SELECT count(*)::int AS stored, (count(*) FILTER (WHERE expires_at > $2))::int AS live
             FROM "${schema}".replay_nonces WHERE keyid = $1`,
          [keyid, now],
        )
        return rows[0]!
      },
      async openInbox(fail) {
        return {
          inbox: stores.createInbox({
            async write(event, client) {
              await client.query(`INSERT INTO ${events} (scope, key, reemission) VALUES ($1, $2, $3)`, [
                event.sender,
                event.idempotencyKey,
                event.reemission,
              ])
              if (fail(event)) throw new Error('the writer failed')
            },
          }),
          published: (scope) => keys(scope, false),
          reemitted: (scope) => keys(scope, true),
        }
      },
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
