/**
 * A caller's own migration on PostgreSQL: every statement commits together or none does, on a pool or a client,
 * and instances migrating together take turns.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { migratePostgres } from './index.js'

const url = await resolveTestPostgresUrl()

describe.skipIf(!url)('migratePostgres', () => {
  const schema = freshSchemaName()
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  afterAll(async () => {
    await pool.end()
    await dropSchema(url!, schema)
  })

  it('rolls back every statement when one fails, on a pool or a client', async () => {
    await expect(
      migratePostgres(pool, schema, async (client) => {
        await client.query(`CREATE SCHEMA "${schema}"`)
        await client.query(`CREATE TABLE "${schema}".first (id int)`)
        await client.query(`CREATE TABLE "${schema}".first (id int)`)
      }),
    ).rejects.toThrow(/already exists/)
    const { rows } = await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
    expect(rows).toEqual([])

    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      expect(
        await migratePostgres(client, schema, async (tx) => {
          await tx.query(`CREATE SCHEMA "${schema}"`)
          return 'done'
        }),
      ).toBe('done')
    } finally {
      await client.end()
    }
    expect((await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount).toBe(1)
  })

  it('serialises instances migrating together: the second sees what the first committed', async () => {
    const migrate = () =>
      migratePostgres(pool, `${schema}:counter`, async (client) => {
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
        await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".counter (n int NOT NULL)`)
        const { rows } = await client.query<{ n: number }>(`SELECT n FROM "${schema}".counter`)
        await new Promise((resolve) => setTimeout(resolve, 30))
        if (rows.length === 0) await client.query(`INSERT INTO "${schema}".counter VALUES (1)`)
        else await client.query(`UPDATE "${schema}".counter SET n = n + 1`)
      })
    await Promise.all([migrate(), migrate(), migrate()])
    const { rows } = await pool.query<{ n: number }>(`SELECT n FROM "${schema}".counter`)
    expect(rows).toEqual([{ n: 3 }])
  })
})
