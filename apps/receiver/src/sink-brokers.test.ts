/**
 * The receiver with a broker SINK_URL, end to end, on the real brokers: signed webhooks sent to the service
 * (one of them twice) reach the broker once each, under the message id of their sender and idempotency key, and
 * /health names the sink with nothing pending. NATS JetStream, Redis Streams and RabbitMQ (a quorum queue).
 */
import { generateSigningKey, signWebhook } from '@adwire/http-signatures'
import { brokerTarget, type BrokerTarget } from '@adwire/vitest-config/broker-targets'
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import { sinkMessageId } from '@adwire/webhooks'
import amqp from 'amqplib'
import { afterAll, describe, expect, it } from 'vitest'
import { api, envelope, startTestReceiver } from './testing/receiver.js'

const name = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
const kinds = ['nats', 'redis', 'rabbitmq'] as const
const cases: { kind: (typeof kinds)[number]; target: BrokerTarget | undefined }[] = []
for (const kind of kinds) {
  const url = await resolveTestBroker(kind)
  cases.push({ kind, target: url ? brokerTarget(kind, url, `receiver.${name}`) : undefined })
}

const cleanup: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const close of cleanup.reverse()) await close()
})

/** A registration with a fresh Ed25519 key on `receiver`, and a function sending one signed webhook to it. */
async function sender(receiver: { url: string }, kid: string) {
  const key = await generateSigningKey({ alg: 'ed25519', kid })
  const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks: key.jwks } })
  expect(created.status).toBe(201)
  const delivery = `${receiver.url}/webhooks/${created.body.id}`
  return async (payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload)
    const headers = { 'content-type': 'application/json' }
    const signed = await signWebhook(
      { method: 'POST', url: delivery, headers, body },
      { key: key.privateJwk },
    )
    return (await fetch(delivery, { method: 'POST', headers: signed.headers, body })).status
  }
}

/** Polls the admin API's view of the relay until `done` holds (15 s at most); resolves with the last view. */
async function relayUntil(receiver: { url: string }, done: (relay: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 15_000
  let relay: Record<string, unknown> = {}
  while (Date.now() < deadline) {
    relay = (await api(receiver, '/api/relay')).body
    if (done(relay)) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return relay
}

describe.each(cases)('the receiver publishing into $kind', ({ kind, target }) => {
  it.skipIf(!target)('publishes each accepted webhook once, under the id of its sender and key', async () => {
    const receiver = await startTestReceiver({ SINK_URL: target!.sinkUrl }, { forwarder: { intervalMs: 50 } })
    cleanup.push(
      () => receiver.close(),
      () => target!.drop(),
    )
    const send = await sender(receiver, `sink-e2e-${kind}`)
    const keys = ['whk_sink_e2e_000001', 'whk_sink_e2e_000002', 'whk_sink_e2e_000003']
    const payloads = keys.map((idempotencyKey) => envelope({ idempotency_key: idempotencyKey }))
    for (const payload of payloads) expect(await send(payload)).toBe(200)
    // The same webhook again: the inbox answers it as a duplicate and nothing more is published.
    expect(await send(payloads[0]!)).toBe(200)

    const relay = await relayUntil(receiver, (view) => view.pending === 0 && Number(view.published) >= 3)
    expect(relay).toMatchObject({ sink: kind, pending: 0, published: 3, last_error: null })
    expect((await api(receiver, '/health', { token: null })).body.forwarding).toMatchObject({
      sink: kind,
      pending: 0,
      published: 3,
    })

    const published = await target!.read()
    expect(published.map((message) => message.body.idempotency_key).sort()).toEqual(keys)
    for (const message of published)
      expect(message.id).toBe(await sinkMessageId(message.body.sender, message.body.idempotency_key))
  })
})

describe('a broker that is down', () => {
  it('never fails a delivery: the webhook is accepted, kept pending, and the error shows to the admin', async () => {
    // Port 1 answers nothing: the broker is down for the whole test.
    const receiver = await startTestReceiver(
      { SINK_URL: 'redis://127.0.0.1:1/0?stream=adwire:down' },
      { forwarder: { intervalMs: 50, baseDelaySeconds: 60 } },
    )
    cleanup.push(() => receiver.close())
    const send = await sender(receiver, 'sink-down')
    expect(await send(envelope({ idempotency_key: 'whk_sink_down_000001' }))).toBe(200)

    const relay = await relayUntil(
      receiver,
      (view) => view.last_error !== null && view.last_error !== undefined,
    )
    expect(relay).toMatchObject({ sink: 'redis', pending: 1, published: 0 })
    expect(String(relay.last_error)).toMatch(/127\.0\.0\.1:1|ECONNREFUSED|connect/i)
    // /health says when, not what: the text can name a private host.
    const health = (await api(receiver, '/health', { token: null })).body.forwarding
    expect(health).toMatchObject({ sink: 'redis', pending: 1, last_error_at: relay.last_error_at })
    expect(health).not.toHaveProperty('last_error')
  })
})

const rabbit = cases.find((entry) => entry.kind === 'rabbitmq')!.target

describe('a broker that refuses', () => {
  it.skipIf(!rabbit)(
    'a full RabbitMQ queue (negative acks) keeps the events pending with the error, and they go out once there is room',
    async () => {
      // A classic queue that holds one message and nacks further publishes (x-overflow reject-publish); the
      // sink uses a queue that exists as it is.
      const queue = `adwire.full.${name}`
      const connection = await amqp.connect(rabbit!.url)
      cleanup.push(async () => {
        const channel = await connection.createChannel()
        await channel.deleteQueue(queue).catch(() => {})
        await connection.close().catch(() => {})
      })
      const admin = await connection.createChannel()
      await admin.assertQueue(queue, {
        durable: true,
        arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
      })
      const receiver = await startTestReceiver(
        { SINK_URL: `${rabbit!.url}?queue=${queue}` },
        { forwarder: { intervalMs: 50, baseDelaySeconds: 0.2, maxDelaySeconds: 0.5 } },
      )
      cleanup.push(() => receiver.close())
      const send = await sender(receiver, 'sink-full')
      const keys = ['whk_sink_full_000001', 'whk_sink_full_000002', 'whk_sink_full_000003']
      for (const idempotencyKey of keys)
        expect(await send(envelope({ idempotency_key: idempotencyKey }))).toBe(200)

      // One fits; the others are refused by the broker and wait in the relay with the refusal as their error.
      const refused = await relayUntil(receiver, (view) => view.pending === 2 && view.last_error !== null)
      expect(refused).toMatchObject({ sink: 'rabbitmq', pending: 2, published: 1 })
      expect(String(refused.last_error)).toMatch(/nack|reject|refused/i)

      // Consume until every key has come out: each one once there is room again.
      const seen: string[] = []
      const deadline = Date.now() + 20_000
      while (seen.length < keys.length && Date.now() < deadline) {
        const message = await admin.get(queue, { noAck: true })
        if (message) seen.push(JSON.parse(message.content.toString('utf8')).idempotency_key)
        else await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(seen.sort()).toEqual(keys)
      expect(await relayUntil(receiver, (view) => view.pending === 0)).toMatchObject({
        pending: 0,
        published: 3,
      })
    },
  )
})
