/**
 * The migration of a caller's own tables beside the stores (a service's records, settings) on the same
 * better-sqlite3 connection (`stores.database`): every statement of one start's migration commits together or not
 * at all, under the write lock taken first.
 */
import type BetterSqlite3 from 'better-sqlite3'

/**
 * Runs `work` in one `BEGIN IMMEDIATE` transaction (the write lock taken first, so two processes opening one
 * file do not both read "not migrated"); any error rolls everything back and is thrown. Returns what `work` returns.
 *
 * @example
 * const stores = openSqliteStores({ path: './data/seller.sqlite' })
 * migrateSqlite(stores.database, () => stores.database.exec('CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT)'))
 */
export function migrateSqlite<T>(db: BetterSqlite3.Database, work: () => T): T {
  return db.transaction(work).immediate()
}
