import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib'
import { RabbitSinkError } from './errors.js'
import type { ResolvedRabbitSinkOptions } from './options.js'

/** The connection's name in RabbitMQ's management UI and `rabbitmqctl list_connections`. */
export const CONNECTION_NAME = 'adwire-sink-rabbitmq'

/** An error as one line. */
export function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  if (error instanceof Error) return error.message || ('code' in error ? String(error.code) : error.name)
  return String(error)
}

/**
 * One open connection and its confirm channel. `alive` turns false when either closes (the broker went away,
 * a channel error); the sink then opens a new link on the next publish. `returned` holds the message ids the
 * broker handed back as unroutable (`mandatory`) and not yet confirmed: RabbitMQ sends `basic.return` before
 * the message's `basic.ack`, so the ack's callback finds it there.
 */
export interface Link {
  readonly connection: ChannelModel
  readonly channel: ConfirmChannel
  readonly alive: () => boolean
  /** Why the channel or connection closed, when it did with an error. */
  readonly reason: () => string | undefined
  /** Marks the link down (a confirm never came): the next publish opens a new one. */
  readonly abandon: (reason: string) => void
  /** Why the broker returned each message not yet confirmed, by message id, oldest first. */
  readonly returned: Map<string, string[]>
}

/**
 * Makes sure the destination exists: a queue that exists is used as it is (its type and arguments are the
 * operator's); an absent one is declared durable with the configured type. An exchange must exist.
 */
async function ensureDestination(link: Link, options: ResolvedRabbitSinkOptions): Promise<void> {
  if (options.queue === undefined) {
    await link.channel.checkExchange(options.exchange)
    return
  }
  // A passive check that fails closes its channel, so it runs on a channel of its own.
  const probe = await link.connection.createChannel()
  probe.on('error', () => undefined)
  const exists = await probe.checkQueue(options.queue.name).then(
    () => true,
    () => false,
  )
  if (exists) await probe.close().catch(() => undefined)
  else {
    await link.channel.assertQueue(options.queue.name, {
      durable: true,
      arguments: { 'x-queue-type': options.queue.type },
    })
  }
}

/**
 * Opens a connection, a confirm channel on it, and ensures the queue or exchange. Any failure closes what was
 * opened and rejects with a `sink_unavailable` {@link RabbitSinkError} naming the target (never the password).
 */
export async function openLink(options: ResolvedRabbitSinkOptions): Promise<Link> {
  let connection: ChannelModel
  try {
    connection = await connect(options.url, {
      timeout: options.connectTimeoutMs,
      clientProperties: { connection_name: CONNECTION_NAME },
    })
  } catch (error) {
    throw new RabbitSinkError(
      'sink_unavailable',
      `cannot connect to RabbitMQ at ${options.target}: ${describe(error)}`,
      { cause: error },
    )
  }
  let alive = true
  let reason: string | undefined
  const down = (error?: unknown) => {
    alive = false
    if (error !== undefined) reason ??= describe(error)
  }
  // Without listeners an 'error' event would throw; the close that follows marks the link down.
  connection.on('error', down)
  connection.on('close', () => down())
  try {
    const channel = await connection.createConfirmChannel()
    channel.on('error', down)
    channel.on('close', () => down())
    const link: Link = {
      connection,
      channel,
      alive: () => alive,
      reason: () => reason,
      abandon: (why) => down(new Error(why)),
      returned: new Map(),
    }
    channel.on(
      'return',
      (message: { properties: { messageId?: unknown }; fields: { replyText?: unknown } }) => {
        const id = String(message.properties.messageId)
        const why = `RabbitMQ returned the message as unroutable (${String(message.fields.replyText)})`
        link.returned.set(id, [...(link.returned.get(id) ?? []), why])
      },
    )
    await ensureDestination(link, options)
    return link
  } catch (error) {
    await connection.close().catch(() => undefined)
    const what =
      options.queue === undefined ? `the exchange '${options.exchange}'` : `the queue '${options.queue.name}'`
    throw new RabbitSinkError(
      'sink_unavailable',
      `cannot use ${what} on RabbitMQ at ${options.target}: ${describe(error)}`,
      { cause: error },
    )
  }
}

/**
 * Closes the link's connection, waiting at most `timeoutMs` for the broker's answer (a broker that stopped
 * answering never sends it); then destroys the socket.
 */
export async function shutdown(link: Link, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const closed = await Promise.race([
    link.connection.close().then(
      () => true,
      () => true, // already closed
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    }),
  ])
  clearTimeout(timer)
  if (!closed) {
    // amqplib's connection keeps its socket as `stream`; the typings do not show it.
    const socket = (link.connection.connection as unknown as { stream?: { destroy(): void } }).stream
    socket?.destroy()
  }
}
