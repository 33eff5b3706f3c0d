/**
 * The SQL surface the apps' storage is written against, once for both databases. Statements use `?`
 * placeholders (rewritten to `$1…` on PostgreSQL); values are text, numbers or null (JSON is stored as text,
 * booleans as 0/1, instants as ISO 8601 text or Unix seconds, so both dialects read the same rows).
 */

/** A value bound to a placeholder. */
export type SqlValue = string | number | null

/** Which database runs the statements. */
export type SqlDialect = 'sqlite' | 'postgres'

/**
 * Runs statements; a transaction handle is one too.
 *
 * @example
 * const rows = await db.all<{ id: string }>('SELECT id FROM jobs WHERE state = ?', ['queued'])
 */
export interface SqlExecutor {
  /** Which database runs the statements (for the few dialect-specific ones, e.g. `FOR UPDATE SKIP LOCKED`). */
  readonly dialect: SqlDialect
  /** Every row of a query. */
  all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>
  /**
   * Every row of a query as an array of its column values, in select order: for large reads, where building
   * one keyed object per row in the driver costs more than the query.
   */
  tuples<Tuple extends readonly unknown[]>(sql: string, params?: readonly SqlValue[]): Promise<Tuple[]>
  /** The first row of a query, or `undefined`. */
  one<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>
}

/**
 * A database connection (SQLite file or PostgreSQL pool).
 *
 * @example
 * await driver.transaction(async (tx) => {
 *   await tx.run('UPDATE jobs SET state = ? WHERE id = ?', ['done', 'job_1'])
 * })
 * await driver.close()
 */
export interface SqlDriver extends SqlExecutor {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/**
 * `?, ?, ?` for `count` values (an `IN (…)` list).
 *
 * @example
 * await db.all(`SELECT * FROM jobs WHERE id IN (${placeholders(ids.length)})`, ids)
 */
export const placeholders = (count: number): string => Array.from({ length: count }, () => '?').join(', ')
