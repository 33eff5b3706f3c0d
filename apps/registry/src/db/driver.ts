/**
 * The SQL surface the registry's repository is written against, once for both databases. Statements use `?`
 * placeholders (rewritten to `$1…` on PostgreSQL); values are text, numbers or null (JSON is stored as text,
 * booleans as 0/1, instants as ISO 8601 text, so both dialects read the same rows).
 */

/** A value bound to a placeholder. */
export type SqlValue = string | number | null

/** Runs statements; a transaction handle is one too. */
export interface SqlExecutor {
  /** Which database runs the statements (for the few dialect-specific ones, e.g. the feed lock). */
  readonly dialect: 'sqlite' | 'postgres'
  /** Every row of a query. */
  all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>
  /**
   * Every row of a query as an array of its column values, in select order: for large reads, where building
   * one keyed object per row in the driver costs more than the query (see `toProperty` for a reader).
   */
  tuples<Tuple extends readonly unknown[]>(sql: string, params?: readonly SqlValue[]): Promise<Tuple[]>
  /** The first row of a query, or `undefined`. */
  one<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>
}

/** A database connection (SQLite file or PostgreSQL pool). */
export interface SqlDriver extends SqlExecutor {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/** `?, ?, ?` for `count` values (an `IN (…)` list). */
export const placeholders = (count: number): string => Array.from({ length: count }, () => '?').join(', ')
