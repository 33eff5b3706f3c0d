import { createHmac } from 'node:crypto'
import { join } from 'node:path'
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
  tempDir,
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

describe('stream tickets are MACed with a key the database does not hold', () => {
  const ticketStatus = async (target: RunningReceiver, ticket: string) => {
    const response = await fetch(`${target.url}/api/stream?ticket=${encodeURIComponent(ticket)}`)
    await response.body?.cancel()
    return response.status
  }
  const issue = async (target: RunningReceiver, token: string) =>
    (await api(target, '/api/stream-tickets', { method: 'POST', token })).body.ticket as string

  it('refuses a ticket forged from the stored token hash; a second instance on the database uses its own key', async () => {
    const database = `sqlite:${join(tempDir(), 'receiver.sqlite')}`
    const first = await startTestReceiver({ DATABASE_URL: database, ADMIN_TOKEN: '' })
    const second = await startTestReceiver({ DATABASE_URL: database, ADMIN_TOKEN: '' })
    try {
      const token = first.runtime.admin.generated!
      expect(first.runtime.admin).toMatchObject({ source: 'generated', ticketKey: 'token' })
      expect(second.runtime.admin).toMatchObject({ source: 'database', ticketKey: 'process' })
      // What someone who reads the database can compute: the old scheme keyed the MAC with this hash.
      const stored = await first.runtime.deps.storage.db.getSetting('admin_token_sha256')
      expect(stored).toMatch(/^[0-9a-f]{64}$/)
      const expiresAt = Math.floor(Date.now() / 1000) + 1800
      const forged = `${expiresAt}.${createHmac('sha256', Buffer.from(stored!, 'hex'))
        .update(`adwire-receiver-stream:${expiresAt}`)
        .digest('base64url')}`
      expect(await ticketStatus(first, forged)).toBe(401)
      expect(await ticketStatus(second, forged)).toBe(401)
      // Real tickets open the stream of the instance that issued them.
      expect(await ticketStatus(first, await issue(first, token))).toBe(200)
      const fromSecond = await issue(second, token)
      expect(await ticketStatus(second, fromSecond)).toBe(200)
      expect(await ticketStatus(first, fromSecond)).toBe(401)
    } finally {
      await Promise.all([first.close(), second.close()])
    }
  })

  it('accepts tickets across instances that share STREAM_TICKET_SECRET, or ADMIN_TOKEN', async () => {
    const database = `sqlite:${join(tempDir(), 'receiver.sqlite')}`
    const secret = { STREAM_TICKET_SECRET: 'stream-ticket-secret-0123456789-abcdef' }
    const [a, b, c] = await Promise.all([
      startTestReceiver({ DATABASE_URL: database, ...secret }),
      startTestReceiver({ DATABASE_URL: database, ...secret }),
      startTestReceiver({ DATABASE_URL: database }),
    ])
    try {
      expect(a!.runtime.admin.ticketKey).toBe('secret')
      expect(c!.runtime.admin.ticketKey).toBe('token')
      expect(await ticketStatus(b!, await issue(a!, ADMIN_TOKEN))).toBe(200)
      // The secret and the token give different keys.
      expect(await ticketStatus(c!, await issue(a!, ADMIN_TOKEN))).toBe(401)
      const restarted = await startTestReceiver({ DATABASE_URL: database })
      try {
        expect(await ticketStatus(restarted, await issue(c!, ADMIN_TOKEN))).toBe(200)
      } finally {
        await restarted.close()
      }
    } finally {
      await Promise.all([a!.close(), b!.close(), c!.close()])
    }
  })
})
