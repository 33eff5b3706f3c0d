/**
 * The one error class of @adwire/store-postgres. The stores never answer a failure with `false` or `null`:
 * a verdict (claimed, conflict, capacity ...) is a value, anything the database could not do is thrown.
 */

/**
 * - `store_unavailable`: the server cannot be reached or cannot do the work now (connection refused, timed
 *   out or dropped, shutting down, too many connections, disk full, lock or statement timeout); transient,
 *   so a receiver answers 503 and the sender retries;
 * - `store_schema_newer`: the schema was migrated by a newer @adwire/store-postgres than this one;
 * - `store_invalid_options`: a bad option, such as a schema name that is not a plain identifier;
 * - `store_duplicate_entry`: an outbox entry with this id was enqueued before;
 * - `store_closed`: the stores were used after `close()`;
 * - `store_retries_exhausted`: a transaction failed with a serialisation failure (SQLSTATE 40001) or a deadlock
 *   (40P01) on every one of its attempts (the `retry.attempts` option); transient, so a receiver answers 503
 *   and the sender retries; `cause` holds the last failure;
 * - `store_query_failed`: any other failure of a statement (the cause carries the PostgreSQL error).
 */
export type StoreErrorCode =
  | 'store_unavailable'
  | 'store_schema_newer'
  | 'store_invalid_options'
  | 'store_duplicate_entry'
  | 'store_closed'
  | 'store_retries_exhausted'
  | 'store_query_failed'

const brand = Symbol.for('@adwire/store-postgres/StoreError')

/**
 * Every failure of this package; `cause` holds the underlying `pg` error when there is one.
 *
 * @example
 * try { result = await stores.claims.claim(input) }
 * catch (error) { if (StoreError.is(error) && error.code === 'store_unavailable') return new Response(null, { status: 503 }) ; throw error }
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

  static is(value: unknown): value is StoreError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

/** Node socket errors that mean "no server to talk to". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
])

/**
 * SQLSTATEs that say "not now" rather than "never": class 08 (connection exception), class 53 (insufficient
 * resources: disk full, out of memory, too many connections), 57P01–57P03 (shutdown, cannot connect now),
 * 57014 (statement timeout), 55P03 (lock timeout), 40001/40P01 (serialisation failure, deadlock) and 25006
 * (read-only transaction: a standby after a failover).
 */
const TRANSIENT_SQLSTATE = /^(08...|53...|57P0[123]|57014|55P03|40001|40P01|25006)$/

/**
 * Whether a `pg` error means the server is unreachable or cannot do the work now: a transient SQLSTATE,
 * a socket error, or the messages `pg` and `pg-pool` raise for timeouts and dropped connections.
 */
export function isUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || TRANSIENT_SQLSTATE.test(code))) return true
  const message = (error as { message?: unknown }).message
  if (typeof message !== 'string') return false
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(
    message,
  )
}

/** The SQLSTATEs after which a whole transaction is run again: serialization_failure, deadlock_detected. */
export type ConflictCode = '40001' | '40P01'

/**
 * `40001` or `40P01` when `error` or one of its causes (a {@link StoreError}, an inbox writer's error) is a
 * serialisation failure or a deadlock; undefined otherwise.
 */
export function conflictCode(error: unknown): ConflictCode | undefined {
  let current = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code
    if (code === '40001' || code === '40P01') return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Wraps anything a statement threw into a {@link StoreError} (a StoreError passes unchanged). */
export function toStoreError(error: unknown, what: string): StoreError {
  if (StoreError.is(error)) return error
  if (isUnavailable(error))
    return new StoreError('store_unavailable', `PostgreSQL is unavailable (${what}): ${describe(error)}`, {
      cause: error,
    })
  return new StoreError('store_query_failed', `${what} failed: ${describe(error)}`, { cause: error })
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describe).join('; ')
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name
  return String(error)
}
