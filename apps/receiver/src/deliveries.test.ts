/**
 * The node:http fast path for deliveries (deliveries.ts): it answers exactly as the Hono route does, takes only
 * what it should, and keeps the body limits (a declared or streamed body beyond 1 MiB is refused with 413
 * before it is read, the socket closed).
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generateSigningKey, signWebhook, type AdcpJwk } from '@adwire/http-signatures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDeliveries, deliveryIntercept } from './deliveries.js'
import type { RunningReceiver } from './service.js'
import { api, envelope, startTestReceiver, streamUntilAnswered } from './testing/receiver.js'

let receiver: RunningReceiver
let privateJwk: AdcpJwk
let id: string
/** A bare node:http server with only the intercept: what it does not take is answered 599. */
let bare: Server
let bareUrl: string
let taken = 0

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'fast-path-key' })
  privateJwk = key.privateJwk
  receiver = await startTestReceiver()
  const created = await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks: key.jwks } })
  expect(created.status).toBe(201)
  id = created.body.id
  const intercept = deliveryIntercept(createDeliveries(receiver.runtime.deps), undefined)
  bare = createServer((request, response) => {
    if (intercept(request, response)) taken += 1
    else response.writeHead(599).end()
  })
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve))
  bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`
})

afterAll(async () => {
  bare?.closeAllConnections()
  await new Promise((resolve) => bare?.close(resolve))
  await receiver?.close()
})

interface Raw {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * A POST with exactly these headers (and Content-Length unless chunked), its answer read whole. `partial`:
 * only `body` is written and the request is left open (the answer must not wait for the rest).
 */
function post(
  url: string,
  headers: Record<string, string>,
  body: string | Buffer,
  partial = false,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: 'POST', headers, agent: false }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
      )
    })
    outgoing.on('error', reject)
    if (partial) outgoing.write(body)
    else outgoing.end(body)
  })
}

async function signed(url: string, payload: unknown): Promise<Raw> {
  const body = JSON.stringify(payload)
  const message = await signWebhook(
    { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
    { key: privateJwk },
  )
  return post(url, message.headers as Record<string, string>, body)
}

const HEADERS = ['cache-control', 'content-type', 'referrer-policy', 'x-content-type-options']
const pick = (answer: Raw) => Object.fromEntries(HEADERS.map((name) => [name, answer.headers[name]]))

describe('the delivery fast path', () => {
  it('answers a delivery as the Hono route does: accepted, then duplicate, with the same headers', async () => {
    const fast = `${bareUrl}/webhooks/${id}`
    const before = taken
    const payload = envelope({ idempotency_key: 'whk_fast_path_0001' })
    const first = await signed(fast, payload)
    const again = await signed(fast, payload)
    expect(taken - before).toBe(2)
    // The same through the service's Hono route (a query keeps a delivery off the fast path).
    const routed = await signed(
      `${receiver.url}/webhooks/${id}?via=hono`,
      envelope({ idempotency_key: 'whk_fast_path_0002' }),
    )
    expect([first.status, JSON.parse(first.body)]).toEqual([200, { status: 'accepted' }])
    expect([again.status, JSON.parse(again.body)]).toEqual([200, { status: 'duplicate' }])
    expect([routed.status, JSON.parse(routed.body)]).toEqual([200, { status: 'accepted' }])
    expect(pick(first)).toEqual(pick(routed))
    expect(pick(first)).toEqual({
      'cache-control': 'no-store',
      'content-type': 'application/json',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    })
    const keys = (await api(receiver, `/api/events?registration=${id}`)).body.events.map(
      (event: { idempotency_key: string }) => event.idempotency_key,
    )
    expect(keys.sort()).toEqual(['whk_fast_path_0001', 'whk_fast_path_0002'])
  })

  it('refuses as the core does: unknown registration, wrong media type, a forged signature', async () => {
    const unknown = await post(
      `${bareUrl}/webhooks/no_such_registration`,
      { 'content-type': 'application/json' },
      '{}',
    )
    const viaHono = await post(
      `${receiver.url}/webhooks/no_such_registration?x=1`,
      { 'content-type': 'application/json' },
      '{}',
    )
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body)).toEqual(JSON.parse(viaHono.body))
    expect(JSON.parse(unknown.body).error.code).toBe('unknown_registration')
    const text = await post(`${bareUrl}/webhooks/${id}`, { 'content-type': 'text/plain' }, '{}')
    expect([text.status, JSON.parse(text.body).error.code]).toEqual([415, 'unsupported_media_type'])
    const forged = await signed(
      `${bareUrl}/webhooks/${id}`,
      envelope({ idempotency_key: 'whk_fast_path_0003' }),
    )
    expect(forged.status).toBe(200)
    // Signed for the fast path, sent to another URL: the @target-uri no longer matches.
    const body = JSON.stringify(envelope({ idempotency_key: 'whk_fast_path_0004' }))
    const message = await signWebhook(
      {
        method: 'POST',
        url: `${bareUrl}/webhooks/${id}`,
        headers: { 'content-type': 'application/json' },
        body,
      },
      { key: privateJwk },
    )
    const moved = await post(
      `${receiver.url}/webhooks/${id}`,
      message.headers as Record<string, string>,
      body,
    )
    expect(moved.status).toBe(401)
    expect(moved.headers['www-authenticate']).toMatch(/webhook_signature/)
  })

  it('finds the registration by the path, never by a /webhooks/ segment in the query', async () => {
    const byPath = await signed(
      `${receiver.url}/webhooks/${id}?next=/webhooks/no_such_registration`,
      envelope({ idempotency_key: 'whk_fast_path_0005' }),
    )
    expect([byPath.status, JSON.parse(byPath.body)]).toEqual([200, { status: 'accepted' }])
    const unknown = await signed(
      `${receiver.url}/webhooks/no_such_registration?next=/webhooks/${id}`,
      envelope({ idempotency_key: 'whk_fast_path_0006' }),
    )
    expect([unknown.status, JSON.parse(unknown.body).error.code]).toEqual([404, 'unknown_registration'])
  })

  it('leaves other methods, queries and paths to the app', async () => {
    const before = taken
    for (const path of [`/webhooks/${id}?a=1`, `/webhooks/${id}/x`, '/webhooks/', '/api/registrations']) {
      expect((await post(`${bareUrl}${path}`, { 'content-type': 'application/json' }, '{}')).status).toBe(599)
    }
    const get = await new Promise<number>((resolve, reject) =>
      httpRequest(`${bareUrl}/webhooks/${id}`, { agent: false }, (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      })
        .on('error', reject)
        .end(),
    )
    expect(get).toBe(599)
    expect(taken).toBe(before)
    // Through the service, a GET is the core's 405.
    expect((await fetch(`${receiver.url}/webhooks/${id}`)).status).toBe(405)
  })

  it('refuses a declared body beyond 1 MiB with 413 before reading it, closing the socket', async () => {
    const answer = await post(
      `${bareUrl}/webhooks/${id}`,
      { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) },
      '{"pad":"',
      true,
    )
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.headers.connection).toBe('close')
  })

  it('stops reading a chunked body at 1 MiB: 413 before the sender has sent it all', async () => {
    const total = 64 * 1024 * 1024
    const before = taken
    const answer = await streamUntilAnswered(
      `${bareUrl}/webhooks/${id}`,
      { 'content-type': 'application/json' },
      '{"pad":"',
      total,
    )
    const outcome = {
      status: answer.status,
      code: JSON.parse(answer.body).error.code,
      sentBeforeAnswer: answer.sentBeforeAnswer,
    }
    expect(taken - before).toBe(1)
    expect(outcome).toMatchObject({ status: 413, code: 'payload_too_large' })
    expect(outcome.sentBeforeAnswer).toBeLessThan(total)
  })
})
