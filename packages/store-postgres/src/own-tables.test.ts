/**
 * A caller's own migration on PostgreSQL: every statement commits together or none does, on a pool or a client,
 * and instances migrating together take turns. A caller's own time-partitioned table maintained like the
 * outbox: partitions created ahead, dropped past retention unless something keeps them.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { maintainOwnPartitions, migratePostgres } from './index.js'

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

describe.skipIf(!url)('maintainOwnPartitions', () => {
  const schema = freshSchemaName()
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  afterAll(async () => {
    await pool.end()
    await dropSchema(url!, schema)
  })

  it("creates the partitions ahead, drops those past the cutoff unless kept, deletes the default's expired rows", async () => {
    const DAY = 86_400
    const start = 1_800_000_000 - (1_800_000_000 % DAY)
    await pool.query(`CREATE SCHEMA "${schema}";
      CREATE TABLE "${schema}".events (id int NOT NULL, at double precision NOT NULL, open boolean NOT NULL)
        PARTITION BY RANGE (at);
      CREATE TABLE "${schema}".events_default PARTITION OF "${schema}".events DEFAULT;
      INSERT INTO "${schema}".events VALUES (1, ${start - 10 * DAY}, false), (2, ${start - 10 * DAY}, true)`)
    const table = {
      table: 'events',
      column: 'at',
      width: DAY,
      ahead: DAY,
      cutoff: (now: number) => now - DAY,
      expired: 'NOT open',
      keep: 'open',
    }
    const names = async () =>
      (
        await pool.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = $1::regclass ORDER BY 1`,
          [`"${schema}".events`],
        )
      ).rows.map((row) => row.name)

    const opened = await maintainOwnPartitions(pool, schema, table, start + 10)
    expect(opened.created).toEqual([`events_p${start}`, `events_p${start + DAY}`])
    // The default's expired row is deleted; the open one stays.
    expect(opened.rows).toBe(1)
    await pool.query(
      `INSERT INTO "${schema}".events VALUES (3, ${start + 5}, true), (4, ${start + 6}, false)`,
    )

    const later = await maintainOwnPartitions(pool, schema, table, start + 3 * DAY)
    // The first day holds an open row: kept. The second (empty) goes; the days ahead are created.
    expect(later.dropped).toEqual([`events_p${start + DAY}`])
    expect(await names()).toEqual([
      'events_default',
      `events_p${start}`,
      `events_p${start + 3 * DAY}`,
      `events_p${start + 4 * DAY}`,
    ])
    await pool.query(`UPDATE "${schema}".events SET open = false WHERE id = 3`)
    const closed = await maintainOwnPartitions(pool, schema, table, start + 3 * DAY)
    expect(closed.dropped).toEqual([`events_p${start}`])
    const { rows } = await pool.query<{ id: number }>(`SELECT id FROM "${schema}".events ORDER BY id`)
    expect(rows).toEqual([{ id: 2 }])
  })
})
