/**
 * Migrations in one transaction: every statement of a start's migration commits together or not at all, and
 * instances starting together on one PostgreSQL database take turns (an advisory lock held to the commit).
 */
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'

/** A PostgreSQL pool (`pg.Pool`) or one connected client (`pg.Client`). */
export type PostgresTarget = pg.Pool | pg.ClientBase

/**
 * Runs `work` inside `BEGIN … COMMIT` on one connection of `target`, after
 * `pg_advisory_xact_lock(hashtext(lock))`: a second instance migrating the same `lock` waits for the first to
 * commit, then sees its tables. Any error rolls everything back and rejects with it.
 *
 * @example
 * await migratePostgres(pool, `adwire_receiver:${schema}`, async (client) => {
 *   await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`)
 *   await client.query(`CREATE TABLE IF NOT EXISTS ${quoted}.settings (name text PRIMARY KEY, value text)`)
 * })
 */
export async function migratePostgres<T>(
  target: PostgresTarget,
  lock: string,
  work: (client: Pick<pg.ClientBase, 'query'>) => Promise<T>,
): Promise<T> {
  // A pool lends one connection for the transaction; a client (which also has `connect`) is used as it is.
  const pooled = 'idleCount' in target ? await target.connect() : undefined
  const client: Pick<pg.ClientBase, 'query'> = pooled ?? (target as pg.ClientBase)
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lock])
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    pooled?.release()
  }
}

/**
 * Runs `work` in one `BEGIN IMMEDIATE` transaction (the write lock taken first, so two processes opening one
 * file do not both read "not migrated"); any error rolls everything back and is thrown.
 *
 * @example
 * migrateSqlite(db, () => db.exec('CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT)'))
 */
export function migrateSqlite<T>(db: BetterSqlite3.Database, work: () => T): T {
  return db.transaction(work).immediate()
}

/**
 * Refuses tables that a newer version of the service migrated (`found` above `known`).
 *
 * @example
 * assertSchemaVersion('receiver', row?.value, 3)
 */
export function assertSchemaVersion(
  service: string,
  found: string | number | undefined,
  known: number,
): void {
  if (found !== undefined && Number(found) > known) {
    throw new Error(`the ${service} tables are at version ${found}; this ${service} knows up to ${known}`)
  }
}
