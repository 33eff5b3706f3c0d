/** The NATS sink's one error class. */

const brand = Symbol.for('@adwire/sink-nats/NatsSinkError')

/**
 * `sink_invalid_options` for a URL or an option the sink cannot use (thrown by {@link createNatsSink} and
 * {@link natsSinkFromUrl}); `sink_unavailable` when no connection to NATS opens or the stream cannot be
 * ensured (`publish` rejects with it: the relay counts every message of the batch as refused);
 * `sink_closed` for a `publish` after `close()`.
 */
export type NatsSinkErrorCode = 'sink_invalid_options' | 'sink_unavailable' | 'sink_closed'

/**
 * A NATS sink that cannot be built, or cannot reach its server or stream.
 *
 * @example
 * try { natsSinkFromUrl('nats://127.0.0.1:4222') }
 * catch (error) { if (NatsSinkError.is(error)) console.error(error.code, error.message) } // sink_invalid_options
 */
export class NatsSinkError extends Error {
  override readonly name = 'NatsSinkError'
  readonly [brand] = true
  constructor(
    readonly code: NatsSinkErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for a {@link NatsSinkError} of any copy of this package. */
  static is(value: unknown): value is NatsSinkError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
