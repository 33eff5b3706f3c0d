/**
 * The receiver with a broker SINK_URL, end to end: signed webhooks sent to the service (one of them twice) reach
 * the real broker once each, with the message id of their sender and idempotency key, and /health names the
 * sink with nothing pending. NATS JetStream here (the other brokers' sinks have their own suites on real brokers).
 */
import { generateSigningKey, signWebhook, type AdcpJwk } from '@adwire/http-signatures'
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import { sinkMessageId } from '@adwire/webhooks'
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { api, envelope, startTestReceiver } from './testing/receiver.js'

const natsUrl = await resolveTestBroker('nats')
const stream = `RECEIVER_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
const subject = `adwire.receiver.${stream.toLowerCase()}`

let receiver: RunningReceiver
let admin: NatsConnection
let manager: JetStreamManager
let privateJwk: AdcpJwk
let delivery: string

describe.skipIf(!natsUrl)('the receiver publishing into NATS JetStream', () => {
  beforeAll(async () => {
    const url = new URL(natsUrl!)
    admin = await connect({ servers: `${url.hostname}:${url.port || 4222}` })
    manager = await jetstreamManager(admin)
    const key = await generateSigningKey({ alg: 'ed25519', kid: 'sink-e2e-key' })
    privateJwk = key.privateJwk
    receiver = await startTestReceiver(
      { SINK_URL: `${natsUrl}?stream=${stream}&subject=${subject}` },
      { forwarder: { intervalMs: 50 } },
    )
    const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks: key.jwks } })
    expect(created.status).toBe(201)
    delivery = `${receiver.url}/webhooks/${created.body.id}`
  })

  afterAll(async () => {
    await receiver?.close()
    await manager?.streams.delete(stream).catch(() => {})
    await admin?.close()
  })

  async function send(payload: Record<string, unknown>): Promise<number> {
    const body = JSON.stringify(payload)
    const headers = { 'content-type': 'application/json' }
    const signed = await signWebhook({ method: 'POST', url: delivery, headers, body }, { key: privateJwk })
    return (await fetch(delivery, { method: 'POST', headers: signed.headers, body })).status
  }

  it('publishes each accepted webhook once, with the id of its sender and key', async () => {
    const keys = ['whk_sink_e2e_000001', 'whk_sink_e2e_000002', 'whk_sink_e2e_000003']
    const payloads = keys.map((key) => envelope({ idempotency_key: key }))
    for (const payload of payloads) expect(await send(payload)).toBe(200)
    // The same webhook again: the inbox answers it as a duplicate and nothing more is published.
    expect(await send(payloads[0]!)).toBe(200)

    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const health = (await api(receiver, '/health')).body
      if (health.forwarding?.pending === 0 && health.forwarding?.published >= 3) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const health = (await api(receiver, '/health')).body
    expect(health.forwarding).toMatchObject({ sink: 'nats', pending: 0, published: 3 })

    const info = await manager.streams.info(stream)
    expect(info.state.messages).toBe(3)
    const published = []
    for (let seq = 1; seq <= 3; seq++) {
      const message = await manager.streams.getMessage(stream, { seq })
      const body = message!.json<{ sender: string; idempotency_key: string }>()
      expect(message!.header.get('Nats-Msg-Id')).toBe(await sinkMessageId(body.sender, body.idempotency_key))
      published.push(body.idempotency_key)
    }
    expect(published.sort()).toEqual(keys)
  })
})
