/**
 * A fresh destination on each broker for a suite or bench that points the receiver's relay at it: the SINK_URL
 * naming it, how to read back every message it holds (its message id and JSON body) and how to delete it. The
 * three clients are the field's own (amqplib, redis, @nats-io), loaded only when a target is used.
 */

/**
 * @typedef {{ readonly id: string, readonly body: any }} Published
 * @typedef {{
 *   readonly kind: 'rabbitmq' | 'redis' | 'nats',
 *   readonly url: string,
 *   readonly sinkUrl: string,
 *   read(): Promise<Published[]>,
 *   drop(): Promise<void>,
 * }} BrokerTarget
 */

/**
 * The destination `name` on the broker at `url`: a NATS JetStream stream (`ADWIRE_<NAME>` on the subject
 * `adwire.<name>`), a Redis stream (`adwire:<name>`) or a RabbitMQ queue (`adwire.<name>`, declared by the sink).
 *
 * @example
 * const url = await resolveTestBroker('redis')
 * const target = brokerTarget('redis', url, `receiver.${crypto.randomUUID().slice(0, 8)}`)
 * // start the receiver with SINK_URL=target.sinkUrl, send webhooks, then:
 * const messages = await target.read()
 * await target.drop()
 * @param {'rabbitmq' | 'redis' | 'nats'} kind
 * @param {string} url
 * @param {string} name letters, digits, dots, dashes and underscores
 * @returns {BrokerTarget}
 */
export function brokerTarget(kind, url, name) {
  if (!/^[\w.-]+$/.test(name))
    throw new TypeError(`brokerTarget: ${JSON.stringify(name)} is not a plain name`)
  if (kind === 'nats') return natsTarget(url, name)
  if (kind === 'redis') return redisTarget(url, name)
  return rabbitTarget(url, name)
}

/**
 * @param {string} url
 * @param {string} name
 * @returns {BrokerTarget}
 */
function natsTarget(url, name) {
  const stream = `ADWIRE_${name.replaceAll(/[.-]/g, '_').toUpperCase()}`
  const withManager = async (/** @type {(manager: any) => Promise<any>} */ use) => {
    const { connect } = await import('@nats-io/transport-node')
    const { jetstreamManager } = await import('@nats-io/jetstream')
    const nc = await connect({ servers: new URL(url).host })
    try {
      return await use(await jetstreamManager(nc))
    } finally {
      await nc.close()
    }
  }
  return {
    kind: 'nats',
    url,
    sinkUrl: `${url}?stream=${stream}&subject=adwire.${name}`,
    read: () =>
      withManager(async (manager) => {
        const info = await manager.streams.info(stream)
        /** @type {Published[]} */
        const out = []
        for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
          const message = await manager.streams.getMessage(stream, { seq })
          if (message) out.push({ id: message.header.get('Nats-Msg-Id'), body: message.json() })
        }
        return out
      }),
    drop: () => withManager((manager) => manager.streams.delete(stream).catch(() => {})),
  }
}

/**
 * @param {string} url
 * @param {string} name
 * @returns {BrokerTarget}
 */
function redisTarget(url, name) {
  const key = `adwire:${name}`
  const withClient = async (/** @type {(client: any) => Promise<any>} */ use) => {
    const { createClient } = await import('redis')
    const client = await createClient({ url }).connect()
    try {
      return await use(client)
    } finally {
      client.destroy()
    }
  }
  return {
    kind: 'redis',
    url,
    sinkUrl: `${url}?stream=${key}`,
    read: () =>
      withClient(async (client) => {
        const entries = (await client.xRange(key, '-', '+')) ?? []
        return entries.map((/** @type {any} */ entry) => ({
          id: String(entry.message.id),
          body: JSON.parse(String(entry.message.body)),
        }))
      }),
    // The stream and the sink's dedupe keys beside it.
    drop: () =>
      withClient(async (client) => {
        const keys = await client.keys(`${key}*`)
        if (keys.length > 0) await client.del(keys)
      }),
  }
}

/**
 * @param {string} url
 * @param {string} name
 * @returns {BrokerTarget}
 */
function rabbitTarget(url, name) {
  const queue = `adwire.${name}`
  const withChannel = async (/** @type {(channel: any) => Promise<any>} */ use) => {
    const amqp = (await import('amqplib')).default
    const connection = await amqp.connect(url)
    try {
      return await use(await connection.createChannel())
    } finally {
      await connection.close().catch(() => {})
    }
  }
  return {
    kind: 'rabbitmq',
    url,
    sinkUrl: `${url}?queue=${queue}`,
    // Reads by taking every message off the queue (acknowledged): a second read returns what arrived since.
    read: () =>
      withChannel(async (channel) => {
        /** @type {Published[]} */
        const out = []
        for (;;) {
          const message = await channel.get(queue, { noAck: true })
          if (!message) return out
          out.push({
            id: String(message.properties.messageId),
            body: JSON.parse(message.content.toString('utf8')),
          })
        }
      }),
    drop: () => withChannel((channel) => channel.deleteQueue(queue).catch(() => {})),
  }
}
