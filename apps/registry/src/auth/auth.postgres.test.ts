import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import pg from 'pg'
import { describe } from 'vitest'
import { authSuite } from '../testing/auth-suite.js'
import { migrateAuthPostgres } from './index.js'

const url = await resolveTestPostgresUrl()

describe.skipIf(!url)('PostgreSQL', () => {
  authSuite('PostgreSQL', async () => {
    const schema = `registry_auth_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const pool = new pg.Pool({ connectionString: url, max: 4 })
    // Two concurrent migrations are serialised by the advisory lock.
    await Promise.all([migrateAuthPostgres(pool, schema), migrateAuthPostgres(pool, schema)])
    return {
      store: { kind: 'postgres', pool, schema },
      async close() {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        await pool.end()
      },
    }
  })
})
