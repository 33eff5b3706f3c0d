/**
 * The HTTP sink: each message POSTed as JSON to one URL, a batch's requests at once (or `concurrency` at a
 * time), each taken on a 2xx answer. The
 * `Idempotency-Key` header is `{registration_id}:{idempotency_key}` of the relay body (the message id when the
 * body is not one), so a downstream dedupes across repeats.
 */
import { redactUrl, type Sink, type SinkMessage, type SinkOutcome } from './sink.js'

export interface HttpSinkOptions {
  /** Default `globalThis.fetch`; give an SSRF-policy fetch where the URL is not trusted. */
  readonly fetch?: typeof globalThis.fetch
  /** Per-request timeout, ms. Default 10 000. */
  readonly timeoutMs?: number
  /**
   * Requests of one batch in flight at once. Default: the whole batch, so a batch takes at most one timeout;
   * 1 posts in the relay's order (oldest first), one after the other.
   */
  readonly concurrency?: number
}

/**
 * @example
 * const relay = createRelay({ source, sink: httpSink('https://events.buyer.example/adcp', { timeoutMs: 5000 }) })
 */
export function httpSink(url: string, options: HttpSinkOptions = {}): Sink {
  const fetchImpl = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? 10_000
  const concurrency = options.concurrency ?? Number.POSITIVE_INFINITY
  if (!(concurrency >= 1)) throw new TypeError('httpSink: concurrency must be at least 1')

  async function post(message: SinkMessage): Promise<SinkOutcome> {
    try {
      const response = await fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey(message) },
        body: message.body,
        signal: AbortSignal.timeout(timeoutMs),
      })
      await response.body?.cancel().catch(() => {})
      return response.ok ? { ok: true } : { ok: false, error: `downstream answered ${response.status}` }
    } catch (cause) {
      return { ok: false, error: `downstream unreachable: ${(cause as Error).message}` }
    }
  }

  return {
    kind: 'http',
    target: redactUrl(url),
    async publish(messages) {
      const outcomes: SinkOutcome[] = Array.from({ length: messages.length })
      let next = 0
      const worker = async () => {
        for (let index = next++; index < messages.length; index = next++)
          outcomes[index] = await post(messages[index]!)
      }
      await Promise.all(Array.from({ length: Math.min(concurrency, messages.length) }, worker))
      return outcomes
    },
    close: () => Promise.resolve(),
  }
}

function idempotencyKey(message: SinkMessage): string {
  try {
    const body = JSON.parse(message.body) as { registration_id?: unknown; idempotency_key?: unknown }
    if (typeof body.registration_id === 'string' && typeof body.idempotency_key === 'string') {
      return `${body.registration_id}:${body.idempotency_key}`
    }
  } catch {
    // Not a relay body: the message id serves.
  }
  return message.id
}
