import { join } from 'node:path'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import {
  api,
  envelope,
  eventually,
  json,
  localServer,
  sendSigned,
  startTestReceiver,
  tempDir,
  type LocalServer,
} from './testing/receiver.js'

let privateJwk: AdcpJwk
let jwks: Jwks
const cleanup: (() => Promise<void>)[] = []

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'lifecycle-key' })
  privateJwk = key.privateJwk
  jwks = key.jwks
})

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function start(env: Record<string, string>, options = {}): Promise<RunningReceiver> {
  const receiver = await startTestReceiver(env, options)
  cleanup.push(() => receiver.close())
  return receiver
}

describe('ADMIN_TOKEN', () => {
  it('is generated at first start, kept (as a hash) across restarts, and overridden by the environment', async () => {
    const database = `sqlite:${join(tempDir(), 'receiver.sqlite')}`
    const first = await startTestReceiver({ DATABASE_URL: database, ADMIN_TOKEN: '' })
    const token = first.runtime.admin.generated!
    expect(first.runtime.admin.source).toBe('generated')
    expect(token).toMatch(/^adw_[A-Za-z0-9_-]{43}$/)
    expect((await api(first, '/api/registrations', { token })).status).toBe(200)
    await first.close()

    const second = await start({ DATABASE_URL: database, ADMIN_TOKEN: '' })
    expect(second.runtime.admin).toMatchObject({ source: 'database' })
    expect(second.runtime.admin.generated).toBeUndefined()
    expect((await api(second, '/api/registrations', { token })).status).toBe(200)
    expect((await api(second, '/api/registrations', { token: `${token}x` })).status).toBe(403)

    const overridden = await start({ DATABASE_URL: database, ADMIN_TOKEN: 'an-explicit-admin-token-42' })
    expect(overridden.runtime.admin.source).toBe('env')
    expect(
      (await api(overridden, '/api/registrations', { token: 'an-explicit-admin-token-42' })).status,
    ).toBe(200)
    expect((await api(overridden, '/api/registrations', { token })).status).toBe(403)
  })
})

describe('sweep', () => {
  it('deletes verification failures older than seven days, and keeps the others', async () => {
    const receiver = await start({})
    const { db } = receiver.runtime.deps.storage
    const now = Date.now() / 1000
    await db.recordFailure({ registrationId: 'r', code: 'old', httpStatus: 401, at: now - 8 * 86_400 })
    await db.recordFailure({ registrationId: 'r', code: 'recent', httpStatus: 401, at: now - 86_400 })
    await receiver.runtime.deps.storage.sweep(now)
    expect((await db.listFailures('r', 10)).map((failure) => failure.code)).toEqual(['recent'])
  })
})

describe('DOWNSTREAM_URL', () => {
  const fastRetries = { forwarder: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.2, intervalMs: 50 } }

  async function downstream(failures: number): Promise<LocalServer> {
    let answered = 0
    const server = await localServer((_request, response) => {
      answered += 1
      json(response, answered <= failures ? 503 : 200, {})
    })
    cleanup.push(() => server.close())
    return server
  }

  it('forwards each published event as JSON, retrying until the downstream takes it', async () => {
    const target = await downstream(2)
    const receiver = await start({ DOWNSTREAM_URL: `${target.url}/events` }, fastRetries)
    const { id, url } = (await api(receiver, '/api/registrations', { body: { auth: 'rfc9421', jwks } })).body
    const payload = envelope({ status: 'completed', result: { media_buy_id: 'mb_1' } })
    expect((await sendSigned(url, payload, privateJwk)).status).toBe(200)
    expect((await sendSigned(url, payload, privateJwk)).status).toBe(200) // a duplicate: not forwarded again
    await eventually(async () => (target.requests.length >= 3 ? true : undefined))
    await eventually(async () =>
      (await api(receiver, '/health')).body.forwarding.pending === 0 ? true : undefined,
    )
    expect(target.requests).toHaveLength(3)
    const delivered = target.requests[2]!
    expect(delivered.method).toBe('POST')
    expect(delivered.url).toBe('/events')
    expect(delivered.headers['content-type']).toBe('application/json')
    expect(delivered.headers['idempotency-key']).toBe(`${id}:${payload.idempotency_key}`)
    expect(JSON.parse(delivered.body)).toMatchObject({
      registration_id: id,
      idempotency_key: payload.idempotency_key,
      operation_id: 'op_1',
      status: 'completed',
      terminal: true,
      payload,
    })
    // Every attempt carried the same event.
    expect(new Set(target.requests.map((request) => request.body)).size).toBe(1)
  })

  it('keeps undelivered events across a restart and delivers them once the downstream answers', async () => {
    const database = `sqlite:${join(tempDir(), 'receiver.sqlite')}`
    const closed = await localServer(() => {})
    const unreachable = closed.url
    await closed.close()
    const first = await startTestReceiver(
      { DATABASE_URL: database, DOWNSTREAM_URL: unreachable },
      fastRetries,
    )
    const { url } = (await api(first, '/api/registrations', { body: { auth: 'rfc9421', jwks } })).body
    const payloads = [envelope(), envelope()]
    for (const payload of payloads) expect((await sendSigned(url, payload, privateJwk)).status).toBe(200)
    expect((await api(first, '/health')).body.forwarding.pending).toBe(2)
    await first.close()

    const target = await downstream(0)
    const second = await start({ DATABASE_URL: database, DOWNSTREAM_URL: target.url }, fastRetries)
    await eventually(async () => (target.requests.length === 2 ? true : undefined))
    expect(target.requests.map((request) => JSON.parse(request.body).idempotency_key).sort()).toEqual(
      payloads.map((payload) => payload.idempotency_key).sort(),
    )
    await eventually(async () =>
      (await api(second, '/health')).body.forwarding.pending === 0 ? true : undefined,
    )
  })
})
