import type { Sink, SinkOutcome } from '@adwire/webhooks'
import { RabbitSinkError } from './errors.js'
import { openLink, shutdown, type Link } from './link.js'
import { rabbitSinkOptionsFromUrl, resolveRabbitSinkOptions, type RabbitSinkOptions } from './options.js'
import { publishBatch } from './publish.js'

/**
 * A {@link Sink} into RabbitMQ with publisher confirms: each message goes out persistent (delivery mode 2),
 * `mandatory`, with `message_id` = the event's id, `content_type: application/json` and the message's headers,
 * and counts as published once the broker acked it. A nack (a queue's `x-overflow: reject-publish`, a broker
 * error), a return (no queue bound) or a channel closing first is that message's `{ ok: false }`. The
 * connection opens on the first `publish`; a publish after it dropped opens a new one; a connection that
 * cannot open (or a queue that cannot be declared, an exchange that does not exist) rejects the `publish`
 * with a `sink_unavailable` {@link RabbitSinkError}. Throws `sink_invalid_options` for bad options.
 *
 * RabbitMQ does not deduplicate: an event the relay publishes twice (after a crash, a lost confirm) arrives
 * twice with the same `message_id`, and the consumer skips the repeat (see the README).
 *
 * @example
 * const sink = createRabbitSink({ url: 'amqp://guest:guest@127.0.0.1:5672/', queue: 'adcp.webhooks' })
 * const outcomes = await sink.publish([{ id: 'q3v…', body: '{"sender":"…"}', headers: { 'adcp-task-type': 'media_buy' } }])
 * // [{ ok: true }]
 * await sink.close()
 */
export function createRabbitSink(options: RabbitSinkOptions): Sink {
  const resolved = resolveRabbitSinkOptions(options)
  let current: Promise<Link> | undefined
  let closed = false
  let closing: Promise<void> | undefined
  const inFlight = new Set<Promise<unknown>>()

  /** The open link, or a new one when there is none or it went down. */
  const connection = async (): Promise<Link> => {
    for (;;) {
      const pending = current
      if (pending === undefined) break
      const link = await pending.catch(() => undefined)
      if (link?.alive()) return link
      if (current !== pending) continue // another publish replaced it meanwhile
      current = undefined
      if (link !== undefined) void shutdown(link, resolved.connectTimeoutMs)
      break
    }
    const opening = openLink(resolved)
    current = opening
    opening.catch(() => {
      if (current === opening) current = undefined
    })
    return opening
  }

  return {
    kind: 'rabbitmq',
    target: resolved.target,
    async publish(messages): Promise<readonly SinkOutcome[]> {
      if (closed)
        throw new RabbitSinkError('sink_closed', `the RabbitMQ sink for ${resolved.target} is closed`)
      if (messages.length === 0) return []
      const run = connection().then((link) => publishBatch(link, messages, resolved))
      inFlight.add(run)
      try {
        return await run
      } finally {
        inFlight.delete(run)
      }
    },
    close() {
      closed = true
      closing ??= (async () => {
        // Let the batches under way get their confirms (each bounded by confirmTimeoutMs) first.
        await Promise.allSettled([...inFlight])
        const pending = current
        current = undefined
        const link = await pending?.catch(() => undefined)
        if (link !== undefined) await shutdown(link, resolved.connectTimeoutMs)
      })()
      return closing
    },
  }
}

/**
 * {@link createRabbitSink} from a URL: `amqp://[user:password@]host:5672[/vhost]?queue=Q` (a quorum queue,
 * or `&queue_type=classic`), or `?exchange=E&routing_key=K` for an existing exchange.
 *
 * @example
 * const sink = rabbitSinkFromUrl('amqp://guest:guest@127.0.0.1:5672/?queue=adcp.webhooks')
 * sink.target // 'amqp://***@127.0.0.1:5672/?queue=adcp.webhooks&queue_type=quorum'
 */
export function rabbitSinkFromUrl(url: string): Sink {
  return createRabbitSink(rabbitSinkOptionsFromUrl(url))
}
