import type { SinkMessage, SinkOutcome } from '@adwire/webhooks'
import { describe, type Link } from './link.js'
import type { ResolvedRabbitSinkOptions } from './options.js'

/**
 * The reason the broker returned a message with this id, if it did, taken off the list. Returns come in
 * publish order and before the message's own confirm; two messages of one id in flight at once share the list,
 * which matters only when the routing changes between them.
 */
function takeReturned(link: Link, id: string): string | undefined {
  const reasons = link.returned.get(id)
  if (reasons === undefined) return undefined
  const reason = reasons.shift()
  if (reasons.length === 0) link.returned.delete(id)
  return reason
}

/** The outcome of a confirm callback's error: a nack, or the channel closed before the confirm. */
function refusal(error: unknown, link: Link): string {
  const message = describe(error)
  if (message === 'message nacked') return 'RabbitMQ refused the message (nack)'
  const reason = link.reason()
  return `RabbitMQ did not confirm the message: ${message}${reason === undefined ? '' : ` (${reason})`}`
}

/**
 * Publishes one message on the link's confirm channel, persistent and mandatory, and gives its outcome once
 * the broker confirmed it, nacked or returned it, the channel closed, or `confirmTimeoutMs` passed. `flushed`
 * is false when the socket's buffer is full (wait for the channel's `drain` before the next).
 */
function publishOne(
  link: Link,
  message: SinkMessage,
  options: ResolvedRabbitSinkOptions,
): { outcome: Promise<SinkOutcome>; flushed: boolean } {
  let flushed = true
  const outcome = new Promise<SinkOutcome>((resolve) => {
    let settled = false
    const settle = (result: SinkOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const timer = setTimeout(() => {
      const error = `RabbitMQ did not confirm the message within ${options.confirmTimeoutMs} ms`
      // A connection that stopped answering: the next publish opens a new one.
      link.abandon(error)
      settle({ ok: false, error })
    }, options.confirmTimeoutMs)
    try {
      flushed = link.channel.publish(
        options.exchange,
        options.routingKey,
        Buffer.from(message.body),
        {
          persistent: true,
          mandatory: true,
          messageId: message.id,
          contentType: 'application/json',
          headers: { ...message.headers },
        },
        (error: unknown) => {
          const returned = takeReturned(link, message.id)
          if (error !== null && error !== undefined) settle({ ok: false, error: refusal(error, link) })
          else if (returned !== undefined) settle({ ok: false, error: returned })
          else settle({ ok: true })
        },
      )
    } catch (error) {
      settle({ ok: false, error: `RabbitMQ did not take the message: ${describe(error)}` })
    }
  })
  return { outcome, flushed }
}

/** Resolves when the channel can take more (its `drain`), or it closed. */
function drained(link: Link): Promise<void> {
  if (!link.alive()) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      link.channel.off('drain', done)
      link.channel.off('close', done)
      resolve()
    }
    link.channel.on('drain', done)
    link.channel.on('close', done)
  })
}

/** Publishes a batch in order, pausing while the socket is full, and resolves one outcome per message. */
export async function publishBatch(
  link: Link,
  messages: readonly SinkMessage[],
  options: ResolvedRabbitSinkOptions,
): Promise<SinkOutcome[]> {
  const outcomes: Promise<SinkOutcome>[] = []
  for (const message of messages) {
    const { outcome, flushed } = publishOne(link, message, options)
    outcomes.push(outcome)
    if (!flushed) await drained(link)
  }
  return Promise.all(outcomes)
}
