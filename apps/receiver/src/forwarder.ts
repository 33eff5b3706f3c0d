/**
 * Relays every published event into the sink SINK_URL (or DOWNSTREAM_URL) names: the relay of
 * @adwire/webhooks over the receiver's event rows. The event row is the queue: it is written pending in the
 * same statement that records the publication, so nothing acknowledged to the seller can be lost; the relay
 * leases due rows (one instance per row, even with many instances; the lease queue of @adwire/sql), publishes
 * them, marks the confirmed ones done and retries the others with capped exponential back-off, never giving
 * up. Delivery is at least once: a consumer dedupes on the message id (an HTTP downstream on the
 * `Idempotency-Key` header: registration id and the webhook's idempotency_key).
 */
import {
  createRelay,
  httpSink,
  relayBody,
  type Relay,
  type RelayOptions,
  type RelaySource,
  type Sink,
} from '@adwire/webhooks'
import type { ForwardJob, ReceiverDatabase } from './db/types.js'

/** The receiver's event rows as the relay's queue. */
export function receiverQueue(db: ReceiverDatabase): RelaySource {
  return {
    lease: (now, limit, leaseSeconds) => db.leaseForwarding(now, limit, leaseSeconds),
    markPublished: (seq, fence, now) => db.markForwarded(seq, fence, now),
    markPublishedMany: (events, now) => db.markForwardedMany(events, now),
    retry: (seq, fence, nextAttemptAt, error) => db.retryForwarding(seq, fence, nextAttemptAt, error),
    release: (seq, fence) => db.releaseForwarding(seq, fence),
    backlog: () => db.forwardingBacklog(),
  }
}

/** Relay settings the receiver lets tests and callers change. */
export type RelaySettings = Partial<Omit<RelayOptions, 'source' | 'sink'>> & {
  /** The HTTP sink's per-request timeout, ms. Default 10 000. */
  readonly timeoutMs?: number
}

export interface ForwarderOptions extends RelaySettings {
  readonly db: ReceiverDatabase
  /** An http(s) URL (the HTTP sink), unless `sink` is given. */
  readonly url?: string
  readonly sink?: Sink
  readonly fetch?: typeof globalThis.fetch
}

/** The relay of the receiver: start, kick after each publication, stop, status for /health. */
export type Forwarder = Relay

/** The JSON body the downstream receives (every sink's message body). */
export function forwardBody(job: ForwardJob) {
  return relayBody(job)
}

/**
 * @example
 * const forwarder = createForwarder({ db, url: 'http://127.0.0.1:9000/events' })
 * forwarder.start()
 * // after each publication: forwarder.kick()
 */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { db, url, sink, fetch, timeoutMs = 10_000, ...settings } = options
  const target = sink ?? (url ? httpSink(url, { timeoutMs, ...(fetch ? { fetch } : {}) }) : undefined)
  if (!target) throw new TypeError('createForwarder needs a url or a sink')
  return createRelay({
    // An HTTP sink posts a batch's requests at once: the lease outlasts them timing out.
    leaseSeconds: Math.ceil(timeoutMs / 1000) + 30,
    ...settings,
    source: receiverQueue(db),
    sink: target,
  })
}
