/**
 * The receiver with a broker SINK_URL, end to end, on the real brokers: signed webhooks sent to the service
 * (one of them twice) reach the broker once each, under the message id of their sender and idempotency key, and
 * /health names the sink with nothing pending. NATS JetStream, Redis Streams and RabbitMQ (a quorum queue).
 */
import { generateSigningKey, signWebhook } from '@adwire/http-signatures'
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import { sinkMessageId } from '@adwire/webhooks'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import amqp from 'amqplib'
import { createClient } from 'redis'
import { afterAll, describe, expect, it } from 'vitest'
import { api, envelope, startTestReceiver } from './testing/receiver.js'

/** What a test reads back from a broker: each message's id and its body. */
interface Published {
  readonly id: string
  readonly body: { sender: string; idempotency_key: string }
}

/** A broker under test: the SINK_URL naming a fresh queue, stream or subject, and how to read it back. */
interface BrokerCase {
  readonly kind: 'nats' | 'redis' | 'rabbitmq'
  readonly url: string | undefined
  readonly sinkUrl: (url: string) => string
  readonly read: (url: string) => Promise<Published[]>
  readonly drop: (url: string) => Promise<void>
}

const name = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
const cases: BrokerCase[] = [
  {
    kind: 'nats',
    url: await resolveTestBroker('nats'),
    sinkUrl: (url) => `${url}?stream=RECEIVER_${name}&subject=adwire.receiver.${name}`,
    async read(url) {
      const nc = await connect({ servers: new URL(url).host })
      try {
        const manager = await jetstreamManager(nc)
        const info = await manager.streams.info(`RECEIVER_${name}`)
        const out: Published[] = []
        for (let seq = 1; seq <= info.state.messages; seq++) {
          const message = (await manager.streams.getMessage(`RECEIVER_${name}`, { seq }))!
          out.push({ id: message.header.get('Nats-Msg-Id'), body: message.json() })
        }
        return out
      } finally {
        await nc.close()
      }
    },
    async drop(url) {
      const nc = await connect({ servers: new URL(url).host })
      await (await jetstreamManager(nc)).streams.delete(`RECEIVER_${name}`).catch(() => {})
      await nc.close()
    },
  },
  {
    kind: 'redis',
    url: await resolveTestBroker('redis'),
    sinkUrl: (url) => `${url}?stream=adwire:receiver:${name}`,
    async read(url) {
      const client = await createClient({ url }).connect()
      try {
        const entries = (await client.xRange(`adwire:receiver:${name}`, '-', '+')) ?? []
        return entries.map((entry) => ({
          id: String(entry.message.id),
          body: JSON.parse(String(entry.message.body)) as Published['body'],
        }))
      } finally {
        client.destroy()
      }
    },
    async drop(url) {
      const client = await createClient({ url }).connect()
      const keys = await client.keys(`adwire:receiver:${name}*`)
      if (keys.length > 0) await client.del(keys)
      client.destroy()
    },
  },
]

cases.push({
  kind: 'rabbitmq',
  url: await resolveTestBroker('rabbitmq'),
  sinkUrl: (url) => `${url}?queue=adwire.receiver.${name}`,
  async read(url) {
    const connection = await amqp.connect(url)
    try {
      const channel = await connection.createChannel()
      const out: Published[] = []
      for (;;) {
        const message = await channel.get(`adwire.receiver.${name}`, { noAck: true })
        if (!message) return out
        out.push({
          id: String(message.properties.messageId),
          body: JSON.parse(message.content.toString('utf8')) as Published['body'],
        })
      }
    } finally {
      await connection.close()
    }
  },
  async drop(url) {
    const connection = await amqp.connect(url)
    const channel = await connection.createChannel()
    await channel.deleteQueue(`adwire.receiver.${name}`).catch(() => {})
    await connection.close().catch(() => {})
  },
})

const cleanup: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const close of cleanup.reverse()) await close()
})

describe.each(cases)('the receiver publishing into $kind', (broker) => {
  it.skipIf(!broker.url)(
    'publishes each accepted webhook once, under the id of its sender and key',
    async () => {
      const key = await generateSigningKey({ alg: 'ed25519', kid: `sink-e2e-${broker.kind}` })
      const receiver = await startTestReceiver(
        { SINK_URL: broker.sinkUrl(broker.url!) },
        { forwarder: { intervalMs: 50 } },
      )
      cleanup.push(
        () => receiver.close(),
        () => broker.drop(broker.url!),
      )
      const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks: key.jwks } })
      expect(created.status).toBe(201)
      const delivery = `${receiver.url}/webhooks/${created.body.id}`
      const send = async (payload: Record<string, unknown>) => {
        const body = JSON.stringify(payload)
        const headers = { 'content-type': 'application/json' }
        const signed = await signWebhook(
          { method: 'POST', url: delivery, headers, body },
          { key: key.privateJwk },
        )
        return (await fetch(delivery, { method: 'POST', headers: signed.headers, body })).status
      }

      const keys = ['whk_sink_e2e_000001', 'whk_sink_e2e_000002', 'whk_sink_e2e_000003']
      const payloads = keys.map((idempotencyKey) => envelope({ idempotency_key: idempotencyKey }))
      for (const payload of payloads) expect(await send(payload)).toBe(200)
      // The same webhook again: the inbox answers it as a duplicate and nothing more is published.
      expect(await send(payloads[0]!)).toBe(200)

      const deadline = Date.now() + 15_000
      let forwarding: Record<string, unknown> = {}
      while (Date.now() < deadline) {
        forwarding = (await api(receiver, '/health')).body.forwarding ?? {}
        if (forwarding.pending === 0 && Number(forwarding.published) >= 3) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(forwarding).toMatchObject({ sink: broker.kind, pending: 0, published: 3 })

      const published = await broker.read(broker.url!)
      expect(published.map((message) => message.body.idempotency_key).sort()).toEqual(keys)
      for (const message of published)
        expect(message.id).toBe(await sinkMessageId(message.body.sender, message.body.idempotency_key))
    },
  )
})

describe('a broker that is down', () => {
  it('never fails a delivery: the webhook is accepted, kept pending, and the error shows in /health', async () => {
    const key = await generateSigningKey({ alg: 'ed25519', kid: 'sink-down' })
    // Port 1 answers nothing: the broker is down for the whole test.
    const receiver = await startTestReceiver(
      { SINK_URL: 'redis://127.0.0.1:1/0?stream=adwire:down' },
      { forwarder: { intervalMs: 50, baseDelaySeconds: 60 } },
    )
    cleanup.push(() => receiver.close())
    const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks: key.jwks } })
    const delivery = `${receiver.url}/webhooks/${created.body.id}`
    const body = JSON.stringify(envelope({ idempotency_key: 'whk_sink_down_000001' }))
    const headers = { 'content-type': 'application/json' }
    const signed = await signWebhook(
      { method: 'POST', url: delivery, headers, body },
      { key: key.privateJwk },
    )
    expect((await fetch(delivery, { method: 'POST', headers: signed.headers, body })).status).toBe(200)

    const deadline = Date.now() + 15_000
    let forwarding: Record<string, unknown> = {}
    while (Date.now() < deadline) {
      forwarding = (await api(receiver, '/health')).body.forwarding ?? {}
      if (forwarding.last_error) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(forwarding).toMatchObject({ sink: 'redis', pending: 1, published: 0 })
    expect(String(forwarding.last_error)).toMatch(/127\.0\.0\.1:1|ECONNREFUSED|connect/i)
  })
})
