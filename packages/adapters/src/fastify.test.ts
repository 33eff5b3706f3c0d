import { MemoryReplayStore } from '@adwire/http-signatures'
import Fastify, { type FastifyInstance } from 'fastify'
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { adcpRequestSigning, adcpWebhooks, webhookReply } from './fastify.js'
import {
  keys,
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

async function listen(app: FastifyInstance): Promise<string> {
  onTestFinished(() => app.close())
  return app.listen({ port: 0, host: '127.0.0.1' })
}

describe('@adwire/adapters/fastify adcpWebhooks', () => {
  it('hands the receiver the untouched body in its own scope; the app keeps its JSON parser', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const app = Fastify()
    await app.register(adcpWebhooks, {
      path: '/webhooks/adcp',
      handle: (request) => receiver.handle(request),
    })
    app.post('/echo', async (request) => ({ parsed: request.body }))
    const base = await listen(app)
    const body = webhookBody()
    const url = `${base}/webhooks/adcp`
    expect(await (await postWebhook(key.seller.privateJwk, url, body)).json()).toEqual({ status: 'accepted' })
    expect(await (await postWebhook(key.seller.privateJwk, url, body)).json()).toEqual({
      status: 'duplicate',
    })
    expect(new TextDecoder().decode(published[0]!.body)).toBe(body)
    expect(published).toHaveLength(1)
    const echo = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(await echo.json()).toEqual({ parsed: { a: 1 } })
  })

  it('catches the parsed-body trap: a route behind the JSON parser answers 500 raw_body_unavailable, not 401', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const app = Fastify()
    app.post('/webhooks/adcp', (request, reply) =>
      webhookReply(request, reply, { handle: (r) => receiver.handle(r) }),
    )
    const response = await postWebhook(key.seller.privateJwk, `${await listen(app)}/webhooks/adcp`)
    expect(response.status).toBe(500)
    const answer = (await response.json()) as { error: { code: string; message: string } }
    expect(answer.error.code).toBe('raw_body_unavailable')
    expect(answer.error.message).toMatch(/adcpWebhooks plugin/)
    expect(published).toEqual([])
  })
})

describe('@adwire/adapters/fastify adcpRequestSigning', () => {
  async function signedApp() {
    const app = Fastify()
    await app.register(async (signed) => {
      await signed.register(adcpRequestSigning, {
        keys: key.buyer.jwks,
        profile: '3.2',
        replayStore: new MemoryReplayStore(),
      })
      signed.post('/adcp/create_media_buy', async (request) => ({
        status: request.adcpSignature?.status,
        keyid: request.adcpSignature?.status === 'verified' ? request.adcpSignature.keyid : undefined,
        body: request.body,
      }))
    })
    app.post('/open', async (request) => ({ signature: request.adcpSignature ?? null }))
    return `${await listen(app)}`
  }

  it('hands the verified signer and the parsed body to the route, and leaves other scopes alone', async () => {
    const base = await signedApp()
    const response = await postSignedRequest(key.buyer.privateJwk, `${base}/adcp/create_media_buy`, {
      a: 'é',
    })
    expect(await response.json()).toEqual({ status: 'verified', keyid: 'buyer-1', body: { a: 'é' } })
    const open = await fetch(`${base}/open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(await open.json()).toEqual({ signature: null })
  })

  it('answers 401 with the spec code when the body changed after signing', async () => {
    const url = `${await signedApp()}/adcp/create_media_buy`
    const response = await postSignedRequest(key.buyer.privateJwk, url, { a: 1 }, (body) =>
      body.replace('1', '2'),
    )
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      'Signature error="request_signature_digest_mismatch"',
    )
  })
})
