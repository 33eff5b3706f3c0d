/**
 * Where a receiver's accepted webhooks go next: a message broker the buyer's services already consume
 * (RabbitMQ, Redis Streams, NATS JetStream: `@adwire/sink-*`) or an HTTP endpoint. The receiver's inbox stays the
 * deduplication point (24 h by sender and key, which no broker keeps); a relay moves each accepted event into the
 * sink as a transactional outbox and repeats a publish after a crash with the same message id, so a consumer
 * that dedupes on the id sees every event once.
 */

/** One accepted event, as a sink publishes it. */
export interface SinkMessage {
  /**
   * The stable id of the event: {@link sinkMessageId} of its sender and idempotency key. Every repeat of a
   * publish carries the same id (AMQP `message_id`, JetStream `Nats-Msg-Id`, the Redis entry's `id` field).
   */
  readonly id: string
  /** The event as JSON text (the relay's body: registration, sender, key, task fields, payload). */
  readonly body: string
  /** A few fields a consumer may route or filter on without parsing the body. */
  readonly headers: Readonly<Record<string, string>>
}

/** What the broker said of one message: confirmed (durably taken), or why not. */
export type SinkOutcome = { readonly ok: true } | { readonly ok: false; readonly error: string }

/**
 * A broker (or endpoint) the relay publishes into. `publish` resolves once the broker has confirmed or refused
 * each message (publisher confirms, the stream's ack, the script's reply), one outcome per message in order; it
 * rejects only when nothing could be attempted (the connection is down), which the relay treats as every
 * message refused. A sink never acknowledges what the broker has not confirmed.
 */
export interface Sink {
  /** `rabbitmq`, `redis`, `nats`, `http`: names the sink in logs and /health. */
  readonly kind: string
  /** Where it publishes, credentials removed (for logs and /health). */
  readonly target: string
  publish(messages: readonly SinkMessage[]): Promise<readonly SinkOutcome[]>
  /** Closes the connection. Idempotent. */
  close(): Promise<void>
}

const encoder = new TextEncoder()

/**
 * The message id of an event: base64url of SHA-256 over `sender`, a newline and the idempotency key (43
 * characters). The receiver deduplicates by the same pair, so one accepted event has one id however often it
 * is published.
 *
 * @example
 * await sinkMessageId('seller.example#key-1', 'whk_01J…') // 'q3v…' (43 characters)
 */
export async function sinkMessageId(sender: string, idempotencyKey: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', encoder.encode(`${sender}\n${idempotencyKey}`)),
  )
  let binary = ''
  for (const byte of digest) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/u, '')
}

/**
 * A URL with its password (and user) replaced, for logs.
 *
 * @example
 * redactUrl('amqp://guest:guest@127.0.0.1:5672/') // 'amqp://***@127.0.0.1:5672/'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.username || parsed.password) {
      parsed.username = '***'
      parsed.password = ''
    }
    return parsed.toString()
  } catch {
    return '<invalid url>'
  }
}
