/**
 * The runner's webhook receiver on 127.0.0.1: RFC 9421 webhook signatures verified against the seller's keys with
 * one run-scoped replay store, per-step URLs, and the 5xx-then-2xx retry trigger of
 * test-kits/webhook-receiver-runner.yaml.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { generateSigningKey, jwksResolver, signWebhook } from '@adwire/http-signatures'
import { startWebhookReceiver, type WebhookSession } from '../src/index.js'

let session: WebhookSession | undefined
afterEach(async () => {
  await session?.close()
  session = undefined
})

const seller = await generateSigningKey({ alg: 'ed25519', kid: 'seller-webhooks-1' })

const payload = (key: string) =>
  JSON.stringify({
    idempotency_key: key,
    operation_id: 'op_1',
    task_id: 't1',
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    result: {},
  })

async function deliver(url: string, body: string, signed: boolean): Promise<number> {
  const message = {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(body),
  }
  const out = signed ? await signWebhook(message, { key: seller.privateJwk }) : message
  const response = await fetch(out.url, {
    method: 'POST',
    headers: out.headers as Record<string, string>,
    body: out.body as Uint8Array,
  })
  return response.status
}

describe('the runner webhook receiver', () => {
  it('verifies signed deliveries against the seller keys and flags unsigned ones', async () => {
    session = await startWebhookReceiver({ keys: jwksResolver(seller.jwks) })
    const url = session.urlFor('trigger')
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/step\/trigger\/c[0-9a-f]{32}$/)
    expect(session.urlFor('trigger')).toBe(url)
    expect(await deliver(url, payload('whk_signed_000000000001'), true)).toBe(200)
    expect(await deliver(url, payload('whk_unsigned_0000000001'), false)).toBe(401)
    expect(session.deliveries('trigger').map((d) => [d.idempotencyKey, d.signatureProblem])).toEqual([
      ['whk_signed_000000000001', undefined],
      ['whk_unsigned_0000000001', 'webhook_signature_header_malformed'],
    ])
  })

  it('answers the first N deliveries with the retry status, then 2xx, recording every attempt', async () => {
    session = await startWebhookReceiver({ keys: jwksResolver(seller.jwks) })
    session.failFirst('retry', 2, 503)
    const url = session.urlFor('retry')
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push(await deliver(url, payload('whk_retry_0000000000001'), true))
    expect(statuses).toEqual([503, 503, 200])
    expect(
      session
        .deliveries('retry')
        .every((d) => d.signatureProblem === undefined && d.idempotencyKey === 'whk_retry_0000000000001'),
    ).toBe(true)
  })

  it('refuses URLs it did not mint', async () => {
    session = await startWebhookReceiver({ keys: jwksResolver(seller.jwks) })
    expect(
      await deliver(`${session.base}/step/other/cnotminted`, payload('whk_stray_0000000000001'), true),
    ).toBe(404)
    expect(session.deliveries('other')).toEqual([])
  })
})
