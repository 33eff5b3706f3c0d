/** The Redis sink's one error class. */

const brand = Symbol.for('@adwire/sink-redis/RedisSinkError')

/**
 * `sink_invalid_options` for a URL or an option the sink cannot use (thrown by {@link createRedisSink} and
 * {@link redisSinkFromUrl}); `sink_unavailable` when no connection to Redis opens, or the connection is down
 * and the client is reconnecting (`publish` rejects with it: the relay counts every message of the batch as
 * refused); `sink_closed` for a `publish` after `close()`.
 */
export type RedisSinkErrorCode = 'sink_invalid_options' | 'sink_unavailable' | 'sink_closed'

/**
 * A Redis sink that cannot be built, or cannot reach its server.
 *
 * @example
 * try { redisSinkFromUrl('redis://127.0.0.1:6379/0') }
 * catch (error) { if (RedisSinkError.is(error)) console.error(error.code, error.message) } // sink_invalid_options
 */
export class RedisSinkError extends Error {
  override readonly name = 'RedisSinkError'
  readonly [brand] = true
  constructor(
    readonly code: RedisSinkErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for a {@link RedisSinkError} of any copy of this package. */
  static is(value: unknown): value is RedisSinkError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
