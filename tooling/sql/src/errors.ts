/** The one error class of @adwire/sql. */

export type SqlErrorCode = 'sql_invalid_queue'

const brand = Symbol.for('@adwire/sql/SqlError')

/**
 * A misuse of the SQL layer (e.g. a lease queue named with something that is not an SQL identifier).
 *
 * @example
 * try {
 *   leaseQueue(driver, spec)
 * } catch (error) {
 *   if (SqlError.is(error) && error.code === 'sql_invalid_queue') console.error(error.message)
 * }
 */
export class SqlError extends Error {
  override readonly name = 'SqlError'
  readonly [brand] = true
  constructor(
    readonly code: SqlErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
  static is(value: unknown): value is SqlError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
