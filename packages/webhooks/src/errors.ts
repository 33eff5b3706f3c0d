/**
 * The package's error class. Its `code` is the AdCP wire code where one exists (`INVALID_REQUEST`), otherwise a
 * stable `webhook_*` identifier, so callers branch on `code`, never on the message.
 */

/**
 * - `INVALID_REQUEST`: a registration, event or delivery report that cannot be sent as given (bad URL, missing
 *   `operation_id`, a legacy credential under 32 characters, an envelope the AdCP schema refuses,
 *   `aggregated_totals` in a delivery report, ...);
 * - `webhook_after_terminal`: the task's initial response was terminal, or it already reported a terminal
 *   status: it fires nothing more;
 * - `webhook_after_final`: the media buy's `final` delivery report was queued: nothing more fires for it;
 * - `webhook_sender_options_invalid`: {@link createWebhookSender} options that cannot work;
 * - `webhook_receiver_options_invalid`: {@link createWebhookReceiver} options that cannot work (no publish, no inbox);
 * - `webhook_publish_failed`: a transactional inbox's event writer threw (nothing of the delivery was kept).
 */
export type WebhookErrorCode =
  | 'INVALID_REQUEST'
  | 'webhook_after_terminal'
  | 'webhook_after_final'
  | 'webhook_sender_options_invalid'
  | 'webhook_receiver_options_invalid'
  | 'webhook_publish_failed'

const brand = Symbol.for('@adwire/webhooks/WebhookError')

/**
 * Thrown by the sender for input it refuses (delivery failures are never thrown: they are recorded as
 * webhook_activity rows and retried or given up on), and by a transactional inbox whose writer failed.
 *
 * @example
 * try {
 *   await sender.notify(registration, event)
 * } catch (error) {
 *   if (WebhookError.is(error) && error.code === 'INVALID_REQUEST') return badRequest(error.message)
 *   throw error
 * }
 */
export class WebhookError extends Error {
  override readonly name = 'WebhookError'
  readonly [brand] = true
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for a WebhookError from any copy of this package. */
  static is(value: unknown): value is WebhookError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
