import { JetStreamApiError } from '@nats-io/jetstream'
import { TimeoutError } from '@nats-io/transport-node'
import type { SinkOutcome } from '@adwire/webhooks'
import { describe } from './stream.js'

/**
 * The outcome of one publish that failed: why JetStream did not confirm it, in words a log reader acts on.
 *
 * @example
 * refused(error, { subject: 'adcp.webhooks', ackTimeoutMs: 5000 }) // { ok: false, error: 'no ack within 5000 ms …' }
 */
export function refused(error: unknown, context: { subject: string; ackTimeoutMs: number }): SinkOutcome {
  if (error instanceof Error && error.name === 'JetStreamNotEnabled') {
    return {
      ok: false,
      error: `no JetStream stream captures subject '${context.subject}' (no responders): ${describe(error)}`,
    }
  }
  if (error instanceof TimeoutError) {
    return { ok: false, error: `no ack from JetStream within ${context.ackTimeoutMs} ms: ${describe(error)}` }
  }
  if (error instanceof JetStreamApiError) {
    return { ok: false, error: `JetStream refused the message (${error.code}): ${describe(error)}` }
  }
  return { ok: false, error: describe(error) }
}
