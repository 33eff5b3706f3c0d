/** The RabbitMQ sink on the real broker: confirms, persistence, repeats, refusals, returns, the connection. */
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import type { SinkMessage, SinkOutcome } from '@adwire/webhooks'
import { connect, type Channel, type ChannelModel, type GetMessage } from 'amqplib'
import { createServer, connect as tcpConnect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createRabbitSink, RabbitSinkError, rabbitSinkFromUrl } from './index.js'

const url = await resolveTestBroker('rabbitmq')

/** A TCP proxy to the broker whose connections the test can cut. */
async function startProxy(host: string, port: number) {
  const sockets = new Set<Socket>()
  const upstreams = new Map<Socket, Socket>()
  const server = createServer((client) => {
    const upstream = tcpConnect({ host, port })
    upstreams.set(upstream, client)
    upstream.on('close', () => upstreams.delete(upstream))
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => undefined)
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    /** Stops passing the broker's frames (its confirms) to the open connections; new ones pass. */
    hold: () => {
      for (const [upstream, client] of upstreams) {
        upstream.unpipe(client)
        upstream.pause()
      }
    },
    /** Drops every open connection; the proxy goes on accepting new ones. */
    cut: () => {
      for (const socket of sockets) socket.destroy()
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe.skipIf(!url)('the RabbitMQ sink', () => {
  let admin: ChannelModel
  let channel: Channel
  const queues: string[] = []
  const exchanges: string[] = []
  /** A queue name of this test alone, deleted after the file. */
  const fresh = (label: string) => {
    const name = `adwire.test.${label}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`
    queues.push(name)
    return name
  }
  const messages = (count: number, prefix = 'event'): SinkMessage[] =>
    Array.from({ length: count }, (_, index) => ({
      id: `${prefix}-${String(index).padStart(3, '0')}`,
      body: JSON.stringify({ index }),
      headers: { 'adcp-sender': 'seller.example#k1', 'adcp-task-type': 'media_buy' },
    }))
  const allOk = (count: number): SinkOutcome[] => Array.from({ length: count }, () => ({ ok: true }))
  /** Every message in the queue, taken with basic.get and acked. */
  const drain = async (queue: string): Promise<GetMessage[]> => {
    const taken: GetMessage[] = []
    for (;;) {
      const message = await channel.get(queue, { noAck: true })
      if (message === false) return taken
      taken.push(message)
    }
  }
  const withPort = (port: number) => {
    const target = new URL(url!)
    target.port = String(port)
    return target.toString()
  }

  beforeAll(async () => {
    admin = await connect(url!)
    channel = await admin.createChannel()
  })
  afterAll(async () => {
    for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined)
    for (const exchange of exchanges) await channel.deleteExchange(exchange).catch(() => undefined)
    await admin.close()
  })

  it('publishes 50 messages, each confirmed, each persistent with its message_id, body and headers, into a quorum queue', async () => {
    const queue = fresh('fifty')
    const sink = rabbitSinkFromUrl(`${url!}?queue=${encodeURIComponent(queue)}`)
    expect(sink.kind).toBe('rabbitmq')
    expect(sink.target).not.toContain('guest:guest')
    const batch = messages(50)
    expect(await sink.publish(batch)).toEqual(allOk(50))
    const taken = await drain(queue)
    expect(taken).toHaveLength(50)
    taken.forEach((message, index) => {
      expect(message.properties.messageId).toBe(batch[index]!.id)
      expect(message.properties.deliveryMode).toBe(2)
      expect(message.properties.contentType).toBe('application/json')
      // A quorum queue adds its x-delivery-count.
      expect(message.properties.headers).toMatchObject(batch[index]!.headers)
      expect(message.content.toString()).toBe(batch[index]!.body)
    })
    // The sink declared it a quorum queue: declaring it classic is refused as inequivalent.
    const probe = await admin.createChannel()
    probe.on('error', () => undefined)
    await expect(
      probe.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'classic' } }),
    ).rejects.toThrow(/PRECONDITION_FAILED/u)
    await sink.close()
  })

  it('delivers an event published twice twice, with the same message_id: the consumer dedupes (the README loop)', async () => {
    const queue = fresh('twice')
    const sink = createRabbitSink({ url: url!, queue, quorum: false })
    const [event] = messages(1, 'repeat')
    const other = messages(1, 'other')
    expect(await sink.publish([event!])).toEqual(allOk(1))
    // The relay crashed before marking it sent: the same event again, in a batch with another.
    expect(await sink.publish([event!, ...other])).toEqual(allOk(2))
    const taken = await drain(queue)
    expect(taken.map((message) => message.properties.messageId)).toEqual([event!.id, event!.id, other[0]!.id])
    expect(taken[1]!.content.toString()).toBe(event!.body)

    // The README's consumer: a handled-ids set (a table in real life) skips the repeat.
    for (const message of messages(1, 'repeat')) await sink.publish([message, message])
    const seen = new Set<string>()
    const applied: string[] = []
    const consumer = await admin.createChannel()
    await consumer.prefetch(10)
    const done = new Promise<void>((resolve) => {
      void consumer.consume(queue, (message) => {
        if (message === null) return
        const id = String(message.properties.messageId)
        if (!seen.has(id)) {
          seen.add(id)
          applied.push(message.content.toString())
        }
        consumer.ack(message)
        if (applied.length === 1) resolve()
      })
    })
    await done
    await vi.waitFor(async () => expect((await channel.checkQueue(queue)).messageCount).toBe(0))
    expect(applied).toEqual([event!.body])
    await consumer.close()
    await sink.close()
  })

  it('refuses (never confirms) what the queue rejects: x-max-length 1 with reject-publish', async () => {
    const queue = fresh('full')
    // The operator's queue: the sink uses an existing queue as it is.
    await channel.assertQueue(queue, {
      durable: true,
      arguments: { 'x-queue-type': 'classic', 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    })
    const sink = createRabbitSink({ url: url!, queue })
    const outcomes = await sink.publish(messages(4))
    expect(outcomes[0]).toEqual({ ok: true })
    for (const outcome of outcomes.slice(1)) {
      expect(outcome).toEqual({ ok: false, error: 'RabbitMQ refused the message (nack)' })
    }
    const taken = await drain(queue)
    expect(taken.map((message) => message.properties.messageId)).toEqual(['event-000'])
    // Room again: the next one goes in.
    expect(await sink.publish(messages(1, 'later'))).toEqual(allOk(1))
    await sink.close()
  })

  it('publishes to an existing exchange: routed is confirmed, unroutable (mandatory) is returned and refused', async () => {
    const exchange = `adwire.test.exchange.${Date.now().toString(36)}`
    exchanges.push(exchange)
    await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false })
    const queue = fresh('bound')
    await channel.assertQueue(queue, { durable: true })
    await channel.bindQueue(queue, exchange, 'webhooks')
    const routed = rabbitSinkFromUrl(`${url!}?exchange=${exchange}&routing_key=webhooks`)
    expect(await routed.publish(messages(3))).toEqual(allOk(3))
    expect((await drain(queue)).map((message) => message.properties.messageId)).toEqual([
      'event-000',
      'event-001',
      'event-002',
    ])
    const unroutable = createRabbitSink({ url: url!, exchange, routingKey: 'nowhere' })
    const outcomes = await unroutable.publish(messages(2))
    expect(outcomes).toEqual([
      { ok: false, error: 'RabbitMQ returned the message as unroutable (NO_ROUTE)' },
      { ok: false, error: 'RabbitMQ returned the message as unroutable (NO_ROUTE)' },
    ])
    // A missing exchange: the sink cannot publish anything, so publish rejects.
    const missing = createRabbitSink({ url: url!, exchange: `${exchange}.missing` })
    await expect(missing.publish(messages(1))).rejects.toSatisfy(
      (error) =>
        RabbitSinkError.is(error) && error.code === 'sink_unavailable' && /NOT_FOUND/u.test(error.message),
    )
    await Promise.all([routed.close(), unroutable.close(), missing.close()])
  })

  it('rejects with a clear error when the broker cannot be reached, and tries again on the next publish', async () => {
    const sink = createRabbitSink({ url: withPort(1), queue: 'adwire.never' })
    await expect(sink.publish(messages(1))).rejects.toSatisfy(
      (error) => RabbitSinkError.is(error) && error.code === 'sink_unavailable',
    )
    await expect(sink.publish(messages(1))).rejects.toThrow(
      /^cannot connect to RabbitMQ at amqp:\/\/\*\*\*@127\.0\.0\.1:1\/\?queue=adwire\.never&queue_type=quorum: .*ECONNREFUSED/u,
    )
    await sink.close()
  })

  it('opens a new connection on the next publish after the connection dropped', async () => {
    const queue = fresh('reconnect')
    const broker = new URL(url!)
    const proxy = await startProxy(broker.hostname, Number(broker.port || 5672))
    const sink = createRabbitSink({ url: withPort(proxy.port), queue })
    expect(await sink.publish(messages(1, 'before'))).toEqual(allOk(1))
    proxy.cut()
    // Once the client saw the close, the next publish opens a new connection.
    await vi.waitFor(
      async () => {
        expect(await sink.publish(messages(2, 'after'))).toEqual(allOk(2))
      },
      { timeout: 5000, interval: 100 },
    )
    const ids = (await drain(queue)).map((message) => message.properties.messageId)
    expect(ids.slice(0, 1)).toEqual(['before-000'])
    expect(ids.slice(-2)).toEqual(['after-000', 'after-001'])
    await sink.close()
    await proxy.stop()
  })

  it('refuses every message whose confirm had not come when the connection dropped (the broker may hold them)', async () => {
    const queue = fresh('cut')
    const broker = new URL(url!)
    const proxy = await startProxy(broker.hostname, Number(broker.port || 5672))
    const sink = createRabbitSink({ url: withPort(proxy.port), queue })
    expect(await sink.publish(messages(1, 'open'))).toEqual(allOk(1))
    proxy.hold()
    const outcomes = sink.publish(messages(3))
    await vi.waitFor(async () => expect((await channel.checkQueue(queue)).messageCount).toBe(4))
    proxy.cut()
    for (const outcome of await outcomes) {
      expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/did not confirm/u) })
    }
    // The relay repeats them under the same ids: the queue then holds each twice, for the consumer to skip.
    await vi.waitFor(async () => expect(await sink.publish(messages(3))).toEqual(allOk(3)), { timeout: 5000 })
    await sink.close()
    await proxy.stop()
  })

  it('refuses a message whose confirm does not come within confirmTimeoutMs, then opens a new connection', async () => {
    const queue = fresh('timeout')
    const broker = new URL(url!)
    const proxy = await startProxy(broker.hostname, Number(broker.port || 5672))
    const sink = createRabbitSink({
      url: withPort(proxy.port),
      queue,
      confirmTimeoutMs: 300,
      connectTimeoutMs: 500,
    })
    expect(await sink.publish(messages(1, 'open'))).toEqual(allOk(1))
    proxy.hold() // the broker's answers stop reaching the client; its socket stays open
    expect(await sink.publish(messages(2))).toEqual([
      { ok: false, error: 'RabbitMQ did not confirm the message within 300 ms' },
      { ok: false, error: 'RabbitMQ did not confirm the message within 300 ms' },
    ])
    expect(await sink.publish(messages(2, 'fresh'))).toEqual(allOk(2))
    const started = Date.now()
    await sink.close()
    expect(Date.now() - started).toBeLessThan(2000)
    await proxy.stop()
  })

  it('closes idempotently, and refuses to publish once closed', async () => {
    const queue = fresh('close')
    const never = createRabbitSink({ url: url!, queue })
    await never.close() // never opened
    await never.close()
    const sink = createRabbitSink({ url: url!, queue })
    expect(await sink.publish(messages(1))).toEqual(allOk(1))
    await Promise.all([sink.close(), sink.close()])
    await sink.close()
    await expect(sink.publish(messages(1))).rejects.toSatisfy(
      (error) => RabbitSinkError.is(error) && error.code === 'sink_closed',
    )
    await expect(sink.publish([])).rejects.toSatisfy(RabbitSinkError.is)
  })
})
