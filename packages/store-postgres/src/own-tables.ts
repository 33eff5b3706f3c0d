/**
 * The migration of a caller's own tables beside the stores (a service's records, settings), on the stores' pool
 * (`stores.pool`) or a client: every statement of one start's migration commits together or not at all, and
 * instances starting together on one database take turns (an advisory lock held to the commit).
 */
import type pg from 'pg'

/** A PostgreSQL pool (`pg.Pool`) or one connected client (`pg.Client`). */
export type PostgresTarget = pg.Pool | pg.ClientBase

/**
 * Runs `work` inside `BEGIN … COMMIT` on one connection of `target`, after
 * `pg_advisory_xact_lock(hashtext(lock))`: a second instance migrating the same `lock` waits for the first to
 * commit, then sees its tables. Any error rolls everything back and rejects with it. Resolves with what `work`
 * resolves with.
 *
 * @example
 * await migratePostgres(stores.pool, `my_service:${schema}`, async (client) => {
 *   await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".settings (name text PRIMARY KEY, value text)`)
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
