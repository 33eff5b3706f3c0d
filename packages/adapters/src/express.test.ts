import { createServer } from 'node:http'
import { MemoryReplayStore } from '@adwire/http-signatures'
import express, { type ErrorRequestHandler } from 'express'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  captureRawBody,
  RawBodyUnavailableError,
  signatureOf,
  verifySignedRequests,
  webhookHandler,
} from './express.js'
import {
  keys,
  listen,
  memoryReceiver,
  postSignedRequest,
  postWebhook,
  webhookBody,
  type Keys,
} from './testing/fixtures.js'

let key: Keys
beforeAll(async () => {
  key = await keys()
})

/** Renders errors as JSON and records them, as an app's error handler would log them. */
function errorRecorder() {
  const errors: unknown[] = []
  const handler: ErrorRequestHandler = (error, _req, res, _next) => {
    errors.push(error)
    res.status(500).json({ error: { code: (error as { code?: string }).code, message: String(error) } })
  }
  return { errors, handler }
}

describe('@adwire/adapters/express webhookHandler', () => {
  it('reads the body itself when no parser ran, keeps the full path under a router, and accepts once', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const app = express()
    const router = express.Router()
    router.post(
      '/adcp',
      webhookHandler((request) => receiver.handle(request)),
    )
    app.use('/webhooks', router)
    app.use(express.json())
    const url = `${await listen(createServer(app))}/webhooks/adcp`
    const body = webhookBody()
    expect(await (await postWebhook(key.seller.privateJwk, url, body)).json()).toEqual({ status: 'accepted' })
    expect(await (await postWebhook(key.seller.privateJwk, url, body)).json()).toEqual({
      status: 'duplicate',
    })
    expect(published).toHaveLength(1)
  })

  it('uses the bytes express.raw() or express.json({ verify: captureRawBody }) kept', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const handler = webhookHandler((request) => receiver.handle(request))
    const raw = express()
    raw.post('/webhooks/adcp', express.raw({ type: '*/*' }), handler)
    const json = express()
    json.use(express.json({ verify: captureRawBody }))
    json.post('/webhooks/adcp', handler)
    for (const app of [raw, json]) {
      const response = await postWebhook(
        key.seller.privateJwk,
        `${await listen(createServer(app))}/webhooks/adcp`,
      )
      expect(await response.json()).toEqual({ status: 'accepted' })
    }
    expect(published).toHaveLength(2)
  })

  it('catches the parsed-body trap: express.json() first gives RawBodyUnavailableError, never a 401', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const recorder = errorRecorder()
    const app = express()
    app.use(express.json())
    app.post(
      '/webhooks/adcp',
      webhookHandler((request) => receiver.handle(request)),
    )
    app.use(recorder.handler)
    const response = await postWebhook(
      key.seller.privateJwk,
      `${await listen(createServer(app))}/webhooks/adcp`,
    )
    expect(response.status).toBe(500)
    expect(recorder.errors).toHaveLength(1)
    expect(recorder.errors[0]).toBeInstanceOf(RawBodyUnavailableError)
    expect(String(recorder.errors[0])).toMatch(/before app\.use\(express\.json\(\)\).*captureRawBody/)
    expect(published).toEqual([])
  })
})

describe('@adwire/adapters/express verifySignedRequests', () => {
  function app(before?: express.RequestHandler) {
    const recorder = errorRecorder()
    const app = express()
    if (before) app.use(before)
    app.use(
      '/adcp',
      verifySignedRequests({ keys: key.buyer.jwks, profile: '3.2', replayStore: new MemoryReplayStore() }),
    )
    app.post('/adcp/create_media_buy', (req, res) => {
      const signature = signatureOf(res)
      res.json({
        status: signature?.status,
        keyid: signature?.status === 'verified' ? signature.keyid : undefined,
        body: req.body,
      })
    })
    app.use(recorder.handler)
    return { app, recorder }
  }

  it('hands the verified signer and the parsed body to the route', async () => {
    const url = `${await listen(createServer(app().app))}/adcp/create_media_buy`
    const response = await postSignedRequest(key.buyer.privateJwk, url, { brand: { domain: 'acme.example' } })
    expect(await response.json()).toEqual({
      status: 'verified',
      keyid: 'buyer-1',
      body: { brand: { domain: 'acme.example' } },
    })
  })

  it('answers 401 with the spec code when the body changed after signing', async () => {
    const url = `${await listen(createServer(app().app))}/adcp/create_media_buy`
    const response = await postSignedRequest(key.buyer.privateJwk, url, { a: 1 }, (body) =>
      body.replace('1', '2'),
    )
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      'Signature error="request_signature_digest_mismatch"',
    )
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'request_signature_digest_mismatch',
    )
  })

  it('verifies behind express.json({ verify: captureRawBody }), and catches the trap behind plain express.json()', async () => {
    const kept = `${await listen(createServer(app(express.json({ verify: captureRawBody })).app))}/adcp/create_media_buy`
    expect(
      ((await (await postSignedRequest(key.buyer.privateJwk, kept, { a: 1 })).json()) as { status: string })
        .status,
    ).toBe('verified')
    const trapped = app(express.json())
    const url = `${await listen(createServer(trapped.app))}/adcp/create_media_buy`
    expect((await postSignedRequest(key.buyer.privateJwk, url, { a: 1 })).status).toBe(500)
    expect(trapped.recorder.errors[0]).toBeInstanceOf(RawBodyUnavailableError)
  })
})
