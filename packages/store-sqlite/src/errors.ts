import Database from 'better-sqlite3'

/**
 * What went wrong, as a string a caller can switch on:
 * - `store_schema_newer`: the file was migrated by a newer @adwire/store-sqlite than this one (upgrade the package);
 * - `store_unavailable`: the file could not be opened, locked within `busyTimeoutMs`, read or written
 *   (busy, I/O error, disk full, read-only): transient for the caller, who answers 503 and lets the sender retry;
 * - `store_corrupt`: the file is not a SQLite database or is damaged (a human has to look);
 * - `store_closed`: the stores were used after `close()`;
 * - `store_duplicate_entry`: an outbox entry with this id already exists;
 * - `store_invalid_options`: `openSqliteStores` was given an option it cannot use.
 */
export type StoreErrorCode =
  | 'store_schema_newer'
  | 'store_unavailable'
  | 'store_corrupt'
  | 'store_closed'
  | 'store_duplicate_entry'
  | 'store_invalid_options'

const brand = Symbol.for('@adwire/store-sqlite/StoreError')

/**
 * Every failure of this package that is about the store rather than a bug: `code` says which
 * ({@link StoreErrorCode}); the SQLite error, when there is one, is the `cause`.
 *
 * @example
 * try {
 *   stores = openSqliteStores({ path: './data/adwire.db' })
 * } catch (error) {
 *   if (StoreError.is(error) && error.code === 'store_schema_newer') console.error(error.message)
 *   throw error
 * }
 */
export class StoreError extends Error {
  override readonly name = 'StoreError'
  readonly [brand] = true
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** Whether `value` is a StoreError, also across copies of this package. */
  static is(value: unknown): value is StoreError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

const unavailable = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOLFS|PERM|AUTH)/
const corrupt = /^SQLITE_(CORRUPT|NOTADB)/

/**
 * Translates what better-sqlite3 throws into a {@link StoreError} where it is about the store (locking, I/O,
 * corruption, a closed connection); anything else (a bug) is returned unchanged.
 */
export function toStoreError(error: unknown, database?: Database.Database): unknown {
  if (StoreError.is(error)) return error
  if (error instanceof Database.SqliteError) {
    if (unavailable.test(error.code)) {
      return new StoreError('store_unavailable', `SQLite store unavailable: ${error.message}`, {
        cause: error,
      })
    }
    if (corrupt.test(error.code)) {
      return new StoreError('store_corrupt', `SQLite store corrupt: ${error.message}`, { cause: error })
    }
    return error
  }
  if (database !== undefined && !database.open) {
    return new StoreError('store_closed', 'the SQLite stores were closed', { cause: error })
  }
  return error
}

/** Runs one store operation, translating its failure with {@link toStoreError}. */
export function guard<T>(database: Database.Database, work: () => T): T {
  try {
    return work()
  } catch (error) {
    throw toStoreError(error, database)
  }
}
