import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import {
  ADMIN_TOKEN,
  api,
  envelope,
  readSse,
  sendSigned,
  startTestReceiver,
  type SseMessage,
} from './testing/receiver.js'

let receiver: RunningReceiver
let privateJwk: AdcpJwk
let jwks: Jwks

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'stream-key' })
  privateJwk = key.privateJwk
  jwks = key.jwks
  receiver = await startTestReceiver()
})

afterAll(async () => {
  await receiver?.close()
})

const openStream = (
  query = '',
  headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` },
) => fetch(`${receiver.url}/api/stream${query}`, { headers })

/** Opens a stream, waits until it is live, runs `action`, and collects messages until `done` says so. */
async function collect(
  query: string,
  action: () => Promise<void>,
  done: (messages: SseMessage[]) => boolean,
): Promise<SseMessage[]> {
  const response = await openStream(query)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  let acted = false
  const messages = await readSse(response, (message, all) => {
    if (message.event === 'ready' && !acted) {
      acted = true
      void action()
    }
    return done(all.filter((item) => item.event !== 'ready'))
  })
  return messages.filter((item) => item.event !== 'ready')
}

describe('GET /api/stream', () => {
  it('pushes new deliveries and verification failures as they happen', async () => {
    const { id, url } = (await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks } })).body
    const payload = envelope({ status: 'submitted' })
    const forger = await generateSigningKey({ alg: 'ed25519', kid: 'stream-key' })
    const messages = await collect(
      `?registration=${id}`,
      async () => {
        await sendSigned(url, payload, privateJwk)
        await sendSigned(url, envelope(), forger.privateJwk)
      },
      (all) => all.length >= 2,
    )
    const byEvent = Object.fromEntries(messages.map((message) => [message.event, JSON.parse(message.data)]))
    expect(byEvent.delivery).toMatchObject({
      registration_id: id,
      idempotency_key: payload.idempotency_key,
      operation_id: 'op_1',
      status: 'submitted',
      publications: 1,
    })
    expect(byEvent.failure).toMatchObject({
      registration_id: id,
      code: 'webhook_signature_invalid',
      http_status: 401,
    })
    for (const message of messages) expect(message.id).toMatch(/^\d+\.\d+$/)
  })

  it('replays from a cursor (?since or Last-Event-ID) and filters by registration', async () => {
    const { id, url } = (await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks } })).body
    const payloads = [envelope({ operation_id: 'op_r' }), envelope({ operation_id: 'op_r' })]
    for (const payload of payloads) expect((await sendSigned(url, payload, privateJwk)).status).toBe(200)
    const everything = await readSse(
      await openStream(`?since=0.0&registration=${id}`),
      (message) => message.event === 'ready',
    )
    const deliveries = everything.filter((message) => message.event === 'delivery')
    expect(deliveries.map((message) => JSON.parse(message.data).idempotency_key)).toEqual(
      payloads.map((payload) => payload.idempotency_key),
    )
    const afterFirst = await readSse(
      await openStream(`?registration=${id}`, {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'last-event-id': deliveries[0]!.id!,
      }),
      (message) => message.event === 'ready',
    )
    expect(
      afterFirst
        .filter((message) => message.event === 'delivery')
        .map((message) => JSON.parse(message.data).idempotency_key),
    ).toEqual([payloads[1]!.idempotency_key])
  })

  it('opens with a stream ticket and refuses a bad one, or none', async () => {
    const issued = await api(receiver, '/api/stream-tickets', { method: 'POST' })
    expect(issued.status).toBe(201)
    const ok = await openStream(`?ticket=${encodeURIComponent(issued.body.ticket)}`, {})
    expect(ok.status).toBe(200)
    await ok.body?.cancel()
    const forged = `${issued.body.ticket.split('.')[0]}.${'A'.repeat(43)}`
    expect((await openStream(`?ticket=${forged}`, {})).status).toBe(401)
    expect((await openStream('', {})).status).toBe(401)
    expect((await openStream('?since=yesterday')).status).toBe(400)
  })
})
