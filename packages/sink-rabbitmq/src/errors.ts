/** The RabbitMQ sink's one error class. */

const brand = Symbol.for('@adwire/sink-rabbitmq/RabbitSinkError')

/**
 * `sink_invalid_options` for a URL or an option the sink cannot use (thrown by {@link createRabbitSink} and
 * {@link rabbitSinkFromUrl}); `sink_unavailable` when no connection to RabbitMQ opens, or the queue cannot be
 * declared or the exchange is missing (`publish` rejects with it: the relay counts every message of the batch
 * as refused); `sink_closed` for a `publish` after `close()`.
 */
export type RabbitSinkErrorCode = 'sink_invalid_options' | 'sink_unavailable' | 'sink_closed'

/**
 * A RabbitMQ sink that cannot be built, or cannot reach its broker, queue or exchange.
 *
 * @example
 * try { rabbitSinkFromUrl('amqp://127.0.0.1:5672/') }
 * catch (error) { if (RabbitSinkError.is(error)) console.error(error.code, error.message) } // sink_invalid_options
 */
export class RabbitSinkError extends Error {
  override readonly name = 'RabbitSinkError'
  readonly [brand] = true
  constructor(
    readonly code: RabbitSinkErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for a {@link RabbitSinkError} of any copy of this package. */
  static is(value: unknown): value is RabbitSinkError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
