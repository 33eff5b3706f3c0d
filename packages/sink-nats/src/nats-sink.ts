import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream'
import { connect, headers, type NatsConnection } from '@nats-io/transport-node'
import type { Sink, SinkMessage, SinkOutcome } from '@adwire/webhooks'
import { NatsSinkError } from './errors.js'
import {
  natsSinkOptionsFromUrl,
  resolveNatsSinkOptions,
  type NatsSinkOptions,
  type ResolvedNatsSinkOptions,
} from './options.js'
import { refused } from './outcome.js'
import { describe, ensureStream } from './stream.js'

interface Connection {
  readonly connection: NatsConnection
  readonly client: JetStreamClient
}

async function open(options: ResolvedNatsSinkOptions): Promise<Connection> {
  let connection: NatsConnection
  try {
    connection = await connect({
      servers: [...options.servers],
      name: 'adwire-sink-nats',
      timeout: options.connectTimeoutMs,
      maxReconnectAttempts: options.maxReconnectAttempts,
      ...(options.user === undefined ? {} : { user: options.user, pass: options.pass ?? '' }),
      ...(options.token === undefined ? {} : { token: options.token }),
    })
  } catch (error) {
    throw new NatsSinkError(
      'sink_unavailable',
      `cannot connect to NATS at ${options.target}: ${describe(error)}`,
      {
        cause: error,
      },
    )
  }
  try {
    if (options.createStream) await ensureStream(await jetstreamManager(connection), options)
  } catch (error) {
    await connection.close().catch(() => undefined)
    throw NatsSinkError.is(error)
      ? error
      : new NatsSinkError(
          'sink_unavailable',
          `JetStream is not available at ${options.target}: ${describe(error)}`,
          {
            cause: error,
          },
        )
  }
  return { connection, client: jetstream(connection, { timeout: options.ackTimeoutMs }) }
}

async function publishOne(
  client: JetStreamClient,
  message: SinkMessage,
  options: ResolvedNatsSinkOptions,
): Promise<SinkOutcome> {
  try {
    const fields = headers()
    for (const [name, value] of Object.entries(message.headers)) fields.set(name, value)
    // A duplicate ack (`duplicate: true`) means the stream already holds this id: confirmed all the same.
    await client.publish(options.subject, message.body, {
      msgID: message.id,
      headers: fields,
      timeout: options.ackTimeoutMs,
    })
    return { ok: true }
  } catch (error) {
    return refused(error, options)
  }
}

/**
 * A {@link Sink} into NATS JetStream: each message is published on the subject with its id as `Nats-Msg-Id`,
 * so the stream drops a repeat within its duplicate window, and counts as published only once the stream's
 * ack arrives (a duplicate ack included). The connection opens on the first `publish` (the stream is created
 * then when absent) and again on the next `publish` after it closed; `publish` rejects with a
 * `sink_unavailable` {@link NatsSinkError} when it cannot open. Throws `sink_invalid_options` for bad options.
 *
 * @example
 * const sink = createNatsSink({ servers: 'nats://127.0.0.1:4222', stream: 'ADCP_WEBHOOKS', subject: 'adcp.webhooks' })
 * const outcomes = await sink.publish([{ id: 'q3v…', body: '{"sender":"…"}', headers: { 'adcp-task-type': 'media_buy' } }])
 * // [{ ok: true }]
 * await sink.close()
 */
export function createNatsSink(options: NatsSinkOptions): Sink {
  const resolved = resolveNatsSinkOptions(options)
  let current: Promise<Connection> | undefined
  let closed = false

  const connection = (): Promise<Connection> => {
    if (current === undefined) {
      const opening = open(resolved)
      current = opening
      // A connection that never opened, or that closed (the server gone, the reconnect attempts run out), is
      // opened again on the next publish.
      opening.then(
        (opened) =>
          opened.connection.closed().then(() => {
            if (current === opening) current = undefined
          }),
        () => {
          if (current === opening) current = undefined
        },
      )
    }
    return current
  }

  const live = async (): Promise<Connection> => {
    const pending = connection()
    const opened = await pending
    if (!opened.connection.isClosed() && !opened.connection.isDraining()) return opened
    // Closed by the server or after the client's reconnect attempts ran out: open a new one.
    if (current === pending) current = undefined
    return connection()
  }

  return {
    kind: 'nats',
    target: resolved.target,
    async publish(messages) {
      if (closed) throw new NatsSinkError('sink_closed', `the NATS sink for ${resolved.target} is closed`)
      if (messages.length === 0) return []
      const { client } = await live()
      const outcomes = new Array<SinkOutcome>(messages.length)
      let next = 0
      const worker = async (): Promise<void> => {
        while (next < messages.length) {
          const index = next++
          outcomes[index] = await publishOne(client, messages[index]!, resolved)
        }
      }
      await Promise.all(Array.from({ length: Math.min(resolved.concurrency, messages.length) }, worker))
      return outcomes
    },
    async close() {
      closed = true
      const pending = current
      current = undefined
      if (pending === undefined) return
      const opened = await pending.catch(() => undefined)
      if (opened === undefined || opened.connection.isClosed()) return
      await opened.connection.drain().catch(() => opened.connection.close())
    },
  }
}

/**
 * {@link createNatsSink} from a URL: `nats://[user:password@]host:4222?stream=S&subject=a.b`, optionally with
 * `&duplicate_window=<seconds>` and `&create_stream=false`.
 *
 * @example
 * const sink = natsSinkFromUrl('nats://127.0.0.1:4222?stream=ADCP_WEBHOOKS&subject=adcp.webhooks')
 * sink.target // 'nats://127.0.0.1:4222?stream=ADCP_WEBHOOKS&subject=adcp.webhooks'
 */
export function natsSinkFromUrl(url: string): Sink {
  return createNatsSink(natsSinkOptionsFromUrl(url))
}
