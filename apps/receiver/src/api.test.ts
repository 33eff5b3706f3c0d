import { request as httpRequest } from 'node:http'
import { generateSigningKey, signWebhook, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import {
  ADMIN_TOKEN,
  api,
  BEARER_TOKEN,
  envelope,
  eventually,
  HMAC_SECRET,
  json,
  localServer,
  sendBearer,
  sendHmac,
  sendSigned,
  startTestReceiver,
  streamUntilAnswered,
  type LocalServer,
} from './testing/receiver.js'

let receiver: RunningReceiver
let keyServer: LocalServer
let privateJwk: AdcpJwk
let jwks: Jwks

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-key-1' })
  privateJwk = key.privateJwk
  jwks = key.jwks
  // Key URLs on 127.0.0.1 over http: the development setting.
  receiver = await startTestReceiver(
    { ALLOW_INSECURE_KEY_URLS: '1' },
    { keyFetch: createSafeFetch({ allowHttp: true, allowLoopback: true }) },
  )
  // The seller's published documents: a JWKS and a brand.json naming it.
  keyServer = await localServer((request, response) => {
    if (request.url === '/.well-known/jwks.json') return json(response, 200, jwks)
    if (request.url === '/.well-known/brand.json') {
      return json(response, 200, {
        agents: [
          { type: 'sales', url: `${keyServer.url}/mcp`, jwks_uri: `${keyServer.url}/.well-known/jwks.json` },
        ],
      })
    }
    json(response, 404, {})
  })
})

afterAll(async () => {
  await receiver?.close()
  await keyServer?.close()
})

const register = async (body: Record<string, unknown>) => {
  const answer = await api(receiver, '/api/registrations', { body })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body as { id: string; url: string }
}

const events = async (id: string) => (await api(receiver, `/api/events?registration=${id}`)).body.events

describe('admin token', () => {
  it('answers 401 without a token and 403 with a wrong one', async () => {
    const missing = await api(receiver, '/api/registrations', { token: null })
    expect(missing.status).toBe(401)
    expect(missing.body.error.code).toBe('unauthorized')
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const wrong = await api(receiver, '/api/registrations', { token: 'not-the-admin-token-at-all' })
    expect(wrong.status).toBe(403)
    expect(wrong.body.error.code).toBe('forbidden')
    const wrongOnPost = await api(receiver, '/api/registrations', {
      body: { auth: 'hmac', secret: HMAC_SECRET },
      token: 'nope',
    })
    expect(wrongOnPost.status).toBe(403)
  })

  it('serves /health without a token', async () => {
    expect(await api(receiver, '/health', { token: null })).toMatchObject({
      status: 200,
      body: { status: 'ok', database: 'sqlite' },
    })
  })
})

describe('registrations', () => {
  it('creates one per authentication mode and lists them without secrets', async () => {
    const created = [
      await register({ auth: 'rfc9421', jwks, shape: 'mcp', label: 'static keys' }),
      await register({ auth: 'rfc9421', jwks_uri: `${keyServer.url}/.well-known/jwks.json` }),
      await register({
        auth: 'rfc9421',
        brand_json_url: `${keyServer.url}/.well-known/brand.json`,
        agent_url: `${keyServer.url}/mcp`,
      }),
      await register({ auth: 'hmac', secret: HMAC_SECRET, shape: 'a2a' }),
      await register({ auth: 'bearer', token: BEARER_TOKEN }),
    ]
    for (const { id, url } of created) {
      expect(id).toMatch(/^[0-9a-f]{32}$/)
      expect(url).toBe(`${receiver.url}/webhooks/${id}`)
    }
    const listed = await api(receiver, '/api/registrations')
    expect(listed.status).toBe(200)
    const ids = listed.body.registrations.map((registration: { id: string }) => registration.id)
    expect(ids).toEqual(expect.arrayContaining(created.map((registration) => registration.id)))
    const text = JSON.stringify(listed.body)
    expect(text).not.toContain(HMAC_SECRET)
    expect(text).not.toContain(BEARER_TOKEN)
    const one = await api(receiver, `/api/registrations/${created[0]!.id}`)
    expect(one.body).toMatchObject({
      auth: 'rfc9421',
      kids: ['seller-key-1'],
      shape: 'mcp',
      label: 'static keys',
    })
  })

  it.each([
    ['not JSON', '{"auth":', 'invalid_json'],
    ['an unknown mode', { auth: 'basic', secret: 'x' }, 'invalid_registration'],
    ['no mode', { secret: HMAC_SECRET }, 'invalid_registration'],
    ['a short HMAC secret', { auth: 'hmac', secret: 'too-short' }, 'invalid_registration'],
    ['a weak HMAC secret', { auth: 'hmac', secret: 'ab'.repeat(20) }, 'invalid_registration'],
    ['a repeated-character bearer token', { auth: 'bearer', token: 'a'.repeat(40) }, 'invalid_registration'],
    [
      'two key sources',
      { auth: 'rfc9421', jwks: { keys: [] }, jwks_uri: 'https://a.example/j' },
      'invalid_registration',
    ],
    ['no key source', { auth: 'rfc9421' }, 'invalid_registration'],
    [
      'brand_json_url without agent_url',
      { auth: 'rfc9421', brand_json_url: 'https://a.example/b' },
      'invalid_registration',
    ],
    [
      'a jwks_uri that is no URL',
      { auth: 'rfc9421', jwks_uri: 'seller.example/jwks.json' },
      'invalid_registration',
    ],
    ['an unknown member', { auth: 'hmac', secret: HMAC_SECRET, colour: 'blue' }, 'invalid_registration'],
    ['an unknown shape', { auth: 'hmac', secret: HMAC_SECRET, shape: 'soap' }, 'invalid_registration'],
    ['a short push token', { auth: 'hmac', secret: HMAC_SECRET, token: 'short' }, 'invalid_registration'],
    ['an array body', [1, 2], 'invalid_registration'],
  ])('answers 400 with details for %s', async (_name, body, code) => {
    const answer = await api(receiver, '/api/registrations', { body })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe(code)
    expect(answer.body.error.message).toEqual(expect.any(String))
    if (code === 'invalid_registration') expect(answer.body.error.details.length).toBeGreaterThan(0)
  })

  it('refuses a private key, a key for another purpose and an unusable key, naming each', async () => {
    const { publicJwk } = await generateSigningKey({ alg: 'es256', kid: 'ec-key' })
    const answer = await api(receiver, '/api/registrations', {
      body: {
        auth: 'rfc9421',
        jwks: {
          keys: [
            privateJwk,
            { ...publicJwk, adcp_use: 'governance-signing' },
            { kid: 'rsa', kty: 'RSA', n: 'x', e: 'AQAB' },
          ],
        },
      },
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error.details.map((detail: { path: string }) => detail.path)).toEqual([
      'jwks.keys.0',
      'jwks.keys.1',
      'jwks.keys.2',
    ])
    expect(answer.body.error.details[0].message).toMatch(/private key/)
  })

  it('refuses plain http key URLs unless ALLOW_INSECURE_KEY_URLS is set', async () => {
    const strict = await startTestReceiver()
    try {
      const answer = await api(strict, '/api/registrations', {
        body: { auth: 'rfc9421', jwks_uri: 'http://seller.example/jwks.json' },
      })
      expect(answer.status).toBe(400)
      expect(answer.body.error.details).toEqual([{ path: 'jwks_uri', message: 'must be an https URL' }])
    } finally {
      await strict.close()
    }
  })

  it('answers 415 for another content type and 413 for a huge body', async () => {
    const form = await api(receiver, '/api/registrations', {
      body: 'auth=hmac',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(form.status).toBe(415)
    const huge = await api(receiver, '/api/registrations', {
      body: { auth: 'hmac', secret: HMAC_SECRET, label: 'x'.repeat(200_000) },
    })
    expect(huge.status).toBe(413)
  })

  it('stops reading a chunked registration body at the limit: 413 before the client has sent it all', async () => {
    const total = 64 * 1024 * 1024
    const outcome = await streamUntilAnswered(
      `${receiver.url}/api/registrations`,
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      '{"auth":"hmac","label":"',
      total,
    )
    expect(outcome.status).toBe(413)
    // Beyond the service's body cap (HTTP_MAX_BODY_BYTES) the HTTP layer refuses it before the route's own limit.
    expect(JSON.parse(outcome.body)).toEqual({
      error: { code: 'payload_too_large', message: 'the body exceeds 1048576 bytes' },
    })
    expect(outcome.sentBeforeAnswer).toBeLessThan(total)
  })

  it('answers 404 in JSON for unknown routes and registrations', async () => {
    expect((await api(receiver, '/api/registrations/nope')).status).toBe(404)
    const route = await api(receiver, '/nowhere')
    expect(route).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } })
  })
})

describe('deliveries', () => {
  it('publishes a signed delivery once; its retry is a duplicate; the events API shows publications 1', async () => {
    const { id, url } = await register({ auth: 'rfc9421', jwks, shape: 'mcp' })
    const payload = envelope({ status: 'working', result: { percentage: 10 } })
    expect(await sendSigned(url, payload, privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await sendSigned(url, payload, privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(await events(id)).toEqual([
      {
        idempotency_key: payload.idempotency_key,
        operation_id: 'op_1',
        task_id: payload.task_id,
        status: 'working',
        received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        publications: 1,
      },
    ])
  })

  it('verifies through a remote JWKS and through brand.json discovery', async () => {
    for (const body of [
      { auth: 'rfc9421', jwks_uri: `${keyServer.url}/.well-known/jwks.json` },
      {
        auth: 'rfc9421',
        brand_json_url: `${keyServer.url}/.well-known/brand.json`,
        agent_url: `${keyServer.url}/mcp`,
      },
    ]) {
      const { id, url } = await register(body)
      const payload = envelope()
      expect((await sendSigned(url, payload, privateJwk)).status).toBe(200)
      expect(await events(id)).toMatchObject([{ idempotency_key: payload.idempotency_key, publications: 1 }])
    }
  })

  it('accepts HMAC and Bearer deliveries on their registrations, once each', async () => {
    const hmac = await register({ auth: 'hmac', secret: HMAC_SECRET })
    const bearer = await register({ auth: 'bearer', token: BEARER_TOKEN })
    const first = envelope({ status: 'completed', result: {} })
    const second = envelope({ status: 'input-required' })
    expect((await sendHmac(hmac.url, first)).status).toBe(200)
    expect((await sendHmac(hmac.url, first)).body).toEqual({ status: 'duplicate' })
    expect((await sendBearer(bearer.url, second)).status).toBe(200)
    expect((await sendBearer(bearer.url, second)).body).toEqual({ status: 'duplicate' })
    expect(await events(hmac.id)).toMatchObject([{ idempotency_key: first.idempotency_key, publications: 1 }])
    expect(await events(bearer.id)).toMatchObject([
      { idempotency_key: second.idempotency_key, publications: 1 },
    ])
  })

  it('refuses forged and wrong-mode deliveries and records each failure with its code', async () => {
    const { id, url } = await register({ auth: 'rfc9421', jwks })
    const forger = await generateSigningKey({ alg: 'ed25519', kid: 'seller-key-1' })
    const forged = await sendSigned(url, envelope(), forger.privateJwk)
    expect(forged.status).toBe(401)
    expect(forged.headers.get('www-authenticate')).toBe('Signature error="webhook_signature_invalid"')
    expect((await sendHmac(url, envelope())).body.error.code).toBe('webhook_mode_mismatch')
    expect((await sendSigned(url, { not: 'an envelope' }, privateJwk)).status).toBe(400)
    const failures = await eventually(async () => {
      const answer = await api(receiver, `/api/failures?registration=${id}`)
      return answer.body.failures.length === 3 ? answer.body.failures : undefined
    })
    expect(failures.map((failure: { code: string }) => failure.code)).toEqual([
      'webhook_signature_invalid',
      'webhook_mode_mismatch',
      'missing_envelope_fields',
    ])
    expect(failures[0]).toMatchObject({ http_status: 401, at: expect.any(String) })
    expect(await events(id)).toEqual([])
  })

  it('refuses a validly signed body with an unpaired surrogate escape (400 invalid_json, recorded), on every retry', async () => {
    const { id, url } = await register({ auth: 'rfc9421', jwks })
    // JSON allows the escape; RFC 8785 (I-JSON) forbids it, so the delivery has no canonical form to key it by.
    const body = JSON.stringify(envelope({ message: 'MARKER' })).replace('MARKER', '\\ud83d')
    expect(body).toContain('"message":"\\ud83d"')
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await sendSigned(url, body, privateJwk)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toEqual({
        code: 'invalid_json',
        message: 'the body holds an unpaired UTF-16 surrogate escape, which RFC 8785 (I-JSON) forbids',
      })
    }
    const failures = await eventually(async () => {
      const answer = await api(receiver, `/api/failures?registration=${id}`)
      return answer.body.failures.length === 2 ? answer.body.failures : undefined
    })
    expect(failures[0]).toMatchObject({ code: 'invalid_json', http_status: 400 })
    expect(await events(id)).toEqual([])
    // The same event with the pair completed (one astral character) is accepted.
    const paired = body.replace('\\ud83d', '\\ud83d\\ude80')
    expect(await sendSigned(url, paired, privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'accepted' },
    })
  })

  it('answers 404 for an unknown registration and 405 for GET', async () => {
    expect((await sendBearer(`${receiver.url}/webhooks/unknown-id`, envelope())).status).toBe(404)
    const { url } = await register({ auth: 'bearer', token: BEARER_TOKEN })
    expect((await fetch(url)).status).toBe(405)
  })

  it('answers 400 for a bad events query and 404 for an unknown registration', async () => {
    expect((await api(receiver, '/api/events')).body.error).toMatchObject({
      code: 'invalid_query',
      details: [{ path: 'registration', message: 'required' }],
    })
    expect((await api(receiver, '/api/events?registration=a%20b')).status).toBe(400)
    expect((await api(receiver, '/api/events?registration=abc&limit=0')).status).toBe(400)
    expect((await api(receiver, '/api/events?registration=unknown')).status).toBe(404)
  })
})

describe('PUBLIC_URL', () => {
  /** POSTs to the receiver's socket with the Host header a proxy would pass on. */
  const post = (port: number, path: string, host: string, headers: Record<string, string>, body: string) =>
    new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, host } },
        (response) => {
          response.resume()
          resolve(response.statusCode ?? 0)
        },
      )
      outgoing.on('error', reject)
      outgoing.end(body)
    })

  it('verifies deliveries signed for the public URL that arrive through a proxy', async () => {
    const proxied = await startTestReceiver({ PUBLIC_URL: 'https://hooks.buyer.example/adcp/' })
    try {
      const created = await api(proxied, '/api/registrations', { body: { auth: 'rfc9421', jwks } })
      expect(created.body.url).toBe(`https://hooks.buyer.example/adcp/webhooks/${created.body.id}`)
      const body = JSON.stringify(envelope())
      const signed = await signWebhook(
        { method: 'POST', url: created.body.url, headers: { 'content-type': 'application/json' }, body },
        { key: privateJwk },
      )
      const path = `/webhooks/${created.body.id}`
      expect(await post(proxied.port, path, 'hooks.buyer.example', signed.headers, body)).toBe(200)
      // A Host that is not the signed authority is refused (cross-vhost replay).
      const again = await signWebhook(
        { method: 'POST', url: created.body.url, headers: { 'content-type': 'application/json' }, body },
        { key: privateJwk },
      )
      expect(await post(proxied.port, path, `127.0.0.1:${proxied.port}`, again.headers, body)).toBe(401)
    } finally {
      await proxied.close()
    }
  })
})

describe('page', () => {
  it('is one self-contained HTML document under a nonce CSP', async () => {
    const response = await fetch(`${receiver.url}/`)
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    const csp = response.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    const html = await response.text()
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/)
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]
    expect(html).toContain(`<script nonce="${nonce}">`)
  })
})
