/**
 * The registry on a PostgreSQL schema: a `pg` pool whose connections use the schema as `search_path`, so the
 * statements are the same as on SQLite (the shared driver of @adwire/sql). Migrations run in one transaction,
 * serialised across concurrently starting instances with an advisory lock.
 */
import { migratePostgres as inTransaction } from '@adwire/service-kit'
import { postgresDriver, type SqlDriver } from '@adwire/sql'
import pg from 'pg'
import { assertKnownVersion, MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js'

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

/**
 * Connects a pool to `connectionString`, creates `schema` if needed and migrates it.
 *
 * @example
 * const { driver, pool } = await openPostgres('postgres://postgres@127.0.0.1:5432/test', 'adwire_registry')
 * await driver.all('SELECT domain FROM registry_brands')
 * await driver.close()
 */
export async function openPostgres(
  connectionString: string,
  schema: string,
): Promise<{ driver: SqlDriver; pool: pg.Pool }> {
  const bootstrap = new pg.Client({ connectionString })
  await bootstrap.connect()
  try {
    await inTransaction(bootstrap, `adwire_registry:${schema}`, async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`)
      await client.query(`SET LOCAL search_path TO ${quote(schema)}`)
      await migratePostgres(client)
    })
  } finally {
    await bootstrap.end()
  }
  const pool = new pg.Pool({ connectionString, options: `-c search_path=${quote(schema)}`, max: 10 })
  pool.on('error', () => {})
  return { driver: postgresDriver(pool), pool }
}

/** Applies the pending migrations on `client`, inside the caller's transaction. */
async function migratePostgres(client: Pick<pg.ClientBase, 'query'>): Promise<void> {
  await client.query(MIGRATIONS_TABLE)
  const { rows } = await client.query<{ version: number }>('SELECT version FROM registry_migrations')
  const applied = rows.map((row) => Number(row.version))
  assertKnownVersion(applied)
  for (const migration of MIGRATIONS) {
    if (applied.includes(migration.version)) continue
    for (const statement of [...migration.statements, ...(migration.dialects?.postgres ?? [])])
      await client.query(statement)
    await client.query('INSERT INTO registry_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
      migration.version,
      migration.name,
      new Date().toISOString(),
    ])
  }
}
