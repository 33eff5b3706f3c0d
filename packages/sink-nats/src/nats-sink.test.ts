/** The NATS sink on the real NATS server with JetStream: acks, duplicate acks, refusals, the connection. */
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import type { SinkMessage } from '@adwire/webhooks'
import { createServer, connect as tcpConnect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createNatsSink, NatsSinkError, natsSinkFromUrl } from './index.js'

const url = await resolveTestBroker('nats')

describe.skipIf(!url)('the NATS JetStream sink', () => {
  let admin: NatsConnection
  let manager: JetStreamManager
  const streams: string[] = []
  /** A stream and subject of this test alone, deleted after the file. */
  const fresh = (label: string) => {
    const suffix = `${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const stream = `ADWIRE_TEST_${suffix}`.toUpperCase()
    streams.push(stream)
    return { stream, subject: `adwire.test.${suffix}` }
  }
  const messages = (count: number): SinkMessage[] =>
    Array.from({ length: count }, (_, index) => ({
      id: `event-${String(index).padStart(3, '0')}`,
      body: JSON.stringify({ index }),
      headers: { 'adcp-sender': 'seller.example#k1', 'adcp-task-type': 'media_buy' },
    }))

  beforeAll(async () => {
    admin = await connect({ servers: url! })
    manager = await jetstreamManager(admin)
  })
  afterAll(async () => {
    for (const stream of streams) await manager.streams.delete(stream).catch(() => undefined)
    await admin.close()
  })

  it('publishes 100 messages, each acked, each stored once with its Nats-Msg-Id; the same 100 again are duplicate acks', async () => {
    const { stream, subject } = fresh('hundred')
    const sink = createNatsSink({ servers: url!, stream, subject })
    expect(sink.kind).toBe('nats')
    const batch = messages(100)
    expect(await sink.publish(batch)).toEqual(batch.map(() => ({ ok: true })))
    let info = await manager.streams.info(stream)
    expect(info.state.messages).toBe(100)
    expect(info.config.duplicate_window).toBe(120_000_000_000) // JetStream's default, 2 minutes
    const first = await manager.streams.getMessage(stream, { seq: 1 })
    expect(first?.header.get('Nats-Msg-Id')).toBe('event-000')
    expect(first?.header.get('adcp-task-type')).toBe('media_buy')
    expect(first?.string()).toBe('{"index":0}')
    const last = await manager.streams.getMessage(stream, { seq: 100 })
    expect(last?.header.get('Nats-Msg-Id')).toBe(batch[99]!.id)

    // A relay repeating the batch after a crash: every one confirmed, none stored twice.
    expect(await sink.publish(batch)).toEqual(batch.map(() => ({ ok: true })))
    info = await manager.streams.info(stream)
    expect(info.state.messages).toBe(100)
    await sink.close()
  })

  it('feeds a durable pull consumer (the README example): each event once, acked, deduplicated on Nats-Msg-Id', async () => {
    const { stream, subject } = fresh('consumer')
    const sink = createNatsSink({ servers: url!, stream, subject })
    const batch = messages(10)
    await sink.publish(batch)
    await sink.publish(batch.slice(0, 5)) // a relay's repeat: duplicate acks, nothing stored
    await manager.consumers.add(stream, { durable_name: 'billing', ack_policy: AckPolicy.Explicit })
    const consumer = await jetstream(admin).consumers.get(stream, 'billing')
    const seen = new Set<string>()
    const handled: unknown[] = []
    const fetched = await consumer.fetch({ max_messages: 20, expires: 1000 })
    for await (const message of fetched) {
      const id = message.headers?.get('Nats-Msg-Id') ?? ''
      if (!seen.has(id)) {
        seen.add(id)
        handled.push(message.json())
      }
      message.ack()
    }
    expect(handled).toEqual(batch.map((_, index) => ({ index })))
    expect(seen).toEqual(new Set(batch.map((message) => message.id)))
    await sink.close()
  })

  it('creates the stream with the duplicate window asked for, and raises an existing stream to it', async () => {
    const { stream, subject } = fresh('window')
    const sink = createNatsSink({ servers: url!, stream, subject, duplicateWindowSeconds: 600 })
    expect(await sink.publish(messages(1))).toEqual([{ ok: true }])
    const info = await manager.streams.info(stream)
    expect(info.config.duplicate_window).toBe(600_000_000_000)
    expect(info.config.storage).toBe('file')
    expect(info.config.subjects).toEqual([subject])
    await sink.close()

    const wider = createNatsSink({ servers: url!, stream, subject, duplicateWindowSeconds: 3600 })
    expect(await wider.publish(messages(2))).toEqual([{ ok: true }, { ok: true }])
    const after = await manager.streams.info(stream)
    expect(after.config.duplicate_window).toBe(3_600_000_000_000)
    expect(after.state.messages).toBe(2)
    await wider.close()
  })

  it('refuses each message of a subject no stream captures (createStream false)', async () => {
    const { stream, subject } = fresh('nostream')
    const sink = natsSinkFromUrl(`${url!}?stream=${stream}&subject=${subject}&create_stream=false`)
    const outcomes = await sink.publish(messages(3))
    expect(outcomes).toHaveLength(3)
    for (const outcome of outcomes) {
      expect(outcome.ok).toBe(false)
      expect(!outcome.ok && outcome.error).toMatch(/no JetStream stream captures subject/u)
    }
    await expect(manager.streams.info(stream)).rejects.toThrow()
    await sink.close()
  })

  it('rejects with a clear error when the server cannot be reached, and tries again on the next publish', async () => {
    const sink = createNatsSink({
      servers: 'nats://127.0.0.1:1',
      stream: 'ADWIRE_NEVER',
      subject: 'adwire.never',
    })
    const attempt = sink.publish(messages(1))
    await expect(attempt).rejects.toSatisfy(
      (error) => NatsSinkError.is(error) && error.code === 'sink_unavailable',
    )
    await expect(sink.publish(messages(1))).rejects.toThrow(
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1\?stream=ADWIRE_NEVER/u,
    )
    await sink.close()
  })

  it('opens a new connection on the next publish after the connection closed', async () => {
    const { stream, subject } = fresh('reopen')
    const target = new URL(url!)
    const proxy = await startProxy(target.hostname, Number(target.port || 4222))
    const sink = createNatsSink({
      servers: `nats://127.0.0.1:${proxy.port}`,
      stream,
      subject,
      maxReconnectAttempts: 0,
    })
    expect(await sink.publish(messages(1))).toEqual([{ ok: true }])
    // The broker goes away: after its one failed reconnect attempt the client closes its connection.
    await proxy.stop()
    // Publishes before the client noticed are refused one by one; once it closed, publish rejects as a whole.
    await vi.waitFor(
      async () => {
        await expect(sink.publish(messages(2))).rejects.toSatisfy(
          (error) => NatsSinkError.is(error) && error.code === 'sink_unavailable',
        )
      },
      { timeout: 10_000, interval: 250 },
    ) // the client waits 2 s before its one reconnect attempt
    // It is back: the next publish opens a new connection.
    const again = await startProxy(target.hostname, Number(target.port || 4222), proxy.port)
    expect(await sink.publish(messages(2))).toEqual([{ ok: true }, { ok: true }])
    expect((await manager.streams.info(stream)).state.messages).toBe(2)
    await sink.close()
    await again.stop()
  })

  it('closes idempotently, and refuses to publish once closed', async () => {
    const { stream, subject } = fresh('close')
    const sink = createNatsSink({ servers: url!, stream, subject })
    await sink.close() // never opened
    const second = createNatsSink({ servers: url!, stream, subject })
    expect(await second.publish(messages(1))).toEqual([{ ok: true }])
    await Promise.all([second.close(), second.close()])
    await second.close()
    await expect(second.publish(messages(1))).rejects.toSatisfy(
      (error) => NatsSinkError.is(error) && error.code === 'sink_closed',
    )
  })
})

/** A TCP proxy to the broker that can be stopped with its connections cut, as a broker restart does. */
async function startProxy(host: string, port: number, listenPort = 0) {
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = tcpConnect({ host, port })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => socket.destroy())
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve))
  const address = server.address()
  return {
    port: typeof address === 'object' && address ? address.port : listenPort,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
