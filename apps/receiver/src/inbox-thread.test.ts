/**
 * The SQLite inbox on its worker thread (SQLITE_INBOX_THREAD=true) against the inbox on the event loop: the
 * same answers and the same events for the same deliveries, sent concurrently, retried, and conflicting.
 */
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { api, envelope, sendSigned, startTestReceiver } from './testing/receiver.js'

let privateJwk: AdcpJwk
let jwks: Jwks

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'inbox-thread-key' })
  privateJwk = key.privateJwk
  jwks = key.jwks
})

describe.each([
  ['on a worker thread', 'true'],
  ['on the event loop', 'false'],
])('the SQLite inbox %s', (_, thread) => {
  let receiver: RunningReceiver
  beforeAll(async () => {
    receiver = await startTestReceiver({ SQLITE_INBOX_THREAD: thread })
  })
  afterAll(async () => {
    await receiver?.close()
  })

  it('publishes concurrent deliveries once each, answers retries as duplicates and a changed payload 409', async () => {
    expect(receiver.runtime.deps.inboxWorker === true).toBe(thread === 'true')
    const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks } })
    expect(created.status).toBe(201)
    const { id, url } = created.body as { id: string; url: string }
    const payloads = Array.from({ length: 40 }, (_, index) =>
      envelope({ status: 'working', result: { percentage: index } }),
    )
    const first = await Promise.all(payloads.map((payload) => sendSigned(url, payload, privateJwk)))
    expect(first.map((answer) => [answer.status, answer.body])).toEqual(
      payloads.map(() => [200, { status: 'accepted' }]),
    )
    // The sellers' retries (new signatures) and the same keys with another payload, all at once.
    const retries = await Promise.all(payloads.map((payload) => sendSigned(url, payload, privateJwk)))
    expect(retries.map((answer) => answer.body)).toEqual(payloads.map(() => ({ status: 'duplicate' })))
    const changed = await sendSigned(url, { ...payloads[0], status: 'failed' }, privateJwk)
    expect(changed.status).toBe(409)
    const listed = (await api(receiver, `/api/events?registration=${id}&limit=100`)).body.events as Array<{
      idempotency_key: string
      publications: number
    }>
    expect(listed.map((event) => event.idempotency_key).sort()).toEqual(
      payloads.map((payload) => payload.idempotency_key).sort(),
    )
    expect(listed.every((event) => event.publications === 1)).toBe(true)
  })
})
