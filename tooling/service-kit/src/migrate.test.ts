import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { assertSchemaVersion, migratePostgres, migrateSqlite } from './index.js'

const url = await resolveTestPostgresUrl()

describe('migrateSqlite', () => {
  it('commits every statement together, or none of them', () => {
    const db = new Database(join(mkdtempSync(join(tmpdir(), 'service-kit-')), 'm.sqlite'))
    try {
      expect(() =>
        migrateSqlite(db, () => {
          db.exec('CREATE TABLE first (id INTEGER)')
          db.exec('CREATE TABLE second (id INTEGER')
        }),
      ).toThrow()
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all()).toEqual([])
      expect(migrateSqlite(db, () => db.exec('CREATE TABLE first (id INTEGER)') && 'done')).toBe('done')
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all()).toEqual([
        { name: 'first' },
      ])
    } finally {
      db.close()
    }
  })

  it('refuses tables a newer version migrated', () => {
    expect(() => assertSchemaVersion('receiver', '4', 3)).toThrow(
      'the receiver tables are at version 4; this receiver knows up to 3',
    )
    expect(() => assertSchemaVersion('receiver', undefined, 3)).not.toThrow()
    expect(() => assertSchemaVersion('receiver', 3, 3)).not.toThrow()
  })
})

describe.skipIf(!url)('migratePostgres', () => {
  const schema = `kit_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
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
      await migratePostgres(client, schema, async (tx) => {
        await tx.query(`CREATE SCHEMA "${schema}"`)
      })
    } finally {
      await client.end()
    }
    expect((await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount).toBe(1)
  })

  it('serialises instances migrating together: the second sees what the first committed', async () => {
    const migrate = () =>
      migratePostgres(pool, `${schema}:counter`, async (client) => {
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
