/**
 * The migration of a caller's own tables beside the stores (a service's records, settings), on the stores' pool
 * (`stores.pool`) or a client: every statement of one start's migration commits together or not at all, and
 * instances starting together on one database take turns (an advisory lock held to the commit).
 */
import type pg from 'pg'
import { Database } from './database.js'
import { maintainPartitions, type Maintenance, type PartitionedTable } from './partitions.js'

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

/**
 * Brings the time partitions of a caller's own table in `schema` in line with `now` (Unix seconds, the
 * caller's clock), as the stores do for the outbox: creates the partitions from the one holding `now` up to
 * `now + table.ahead`, detaches (under a 100 ms lock timeout) and drops those whose upper bound is at or before
 * `table.cutoff(now)` and that hold no row meeting `table.keep`, and deletes the default partition's expired
 * rows. The table must be `PARTITION BY RANGE (table.column)` with a DEFAULT partition named `<table>_default`;
 * the partitions are named `<table>_p<start>`. A step that meets a lock, or another process maintaining the
 * same table, is left to the next call (`deferred`). Runs on connections of `pool`; an error rejects with a
 * `StoreError`.
 *
 * @example
 * await maintainOwnPartitions(stores.pool, 'adwire_receiver', {
 *   table: 'receiver_events', column: 'received_at', width: 86_400, ahead: 2 * 86_400,
 *   cutoff: (now) => now - 30 * 86_400, expired: "forward_state <> 'pending'", keep: "forward_state = 'pending'",
 * }, Date.now() / 1000)
 */
export function maintainOwnPartitions(
  pool: pg.Pool,
  schema: string,
  table: PartitionedTable,
  now: number,
): Promise<Maintenance> {
  return maintainPartitions(new Database(pool, schema), table, now)
}
