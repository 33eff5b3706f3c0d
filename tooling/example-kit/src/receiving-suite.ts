/**
 * The one suite every receiving example passes: started for real on 127.0.0.1, trusting a JWKS file with two
 * seller keys, it receives deliveries signed by adwire's sender and by an independent signer, and answers as
 * the reference receiver does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { generateSigningKey, signRequest, type AdcpJwk } from '@adwire/http-signatures'
import { createWebhookSender, MemoryOutboxStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { independentKey, independentlySigned, type IndependentKey } from './independent-signer.js'
import { startExample, type RunningExample } from './start.js'
import { signed } from './sign.js'

export const WEBHOOK_PATH = '/webhooks/adcp'
// Starting an example compiles it on the fly (tsx): allow for a busy machine.
const STARTUP_MS = 60_000

/** An MCP-shape task webhook with a fresh idempotency key and task. */
export const envelope = (overrides: Record<string, unknown> = {}) => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  operation_id: 'op_1',
  task_id: `task_${crypto.randomUUID()}`,
  task_type: 'create_media_buy',
  status: 'working',
  timestamp: new Date().toISOString(),
  result: { percentage: 10 },
  ...overrides,
})

async function answer(response: Response) {
  const text = await response.text()
  return { status: response.status, body: JSON.parse(text) as { status?: string; error?: { code: string } } }
}

export function describeReceivingExample(name: string, dir: string): void {
  describe(`${name} example`, () => {
    let ours: { privateJwk: AdcpJwk; publicJwk: AdcpJwk }
    let theirs: IndependentKey
    let work: string
    let example: RunningExample
    let url: string

    const publishedLines = (key: string) => example.lines.filter((line) => line.includes(key))
    const post = (headers: Record<string, string>, body: string | Uint8Array) =>
      fetch(url, { method: 'POST', headers, body })

    beforeAll(async () => {
      ours = await generateSigningKey({ alg: 'ed25519', kid: 'ours-1', adcpUse: 'webhook-signing' })
      theirs = independentKey('independent-1')
      work = mkdtempSync(path.join(tmpdir(), `adwire-example-${name}-`))
      const jwksFile = path.join(work, 'seller-jwks.json')
      writeFileSync(jwksFile, JSON.stringify({ keys: [ours.publicJwk, theirs.publicJwk] }))
      example = await startExample(dir, { JWKS_FILE: jwksFile, DATA_DIR: path.join(work, 'data') })
      url = `${example.origin}${WEBHOOK_PATH}`
      // An unsigned delivery is refused; it also makes a dev server (next dev) compile the route up front.
      const unsigned = await post({ 'content-type': 'application/json' }, '{}')
      expect(unsigned.status).toBe(401)
      expect(unsigned.headers.get('www-authenticate')).toBe(
        'Signature error="webhook_signature_header_malformed"',
      )
    }, STARTUP_MS)
    afterAll(async () => {
      await example?.stop()
      if (work) rmSync(work, { recursive: true, force: true })
    })

    it('accepts a delivery signed by adwire once, and answers its retry 200 duplicate', async () => {
      const payload = envelope()
      const first = await signed(ours.privateJwk, url, payload)
      expect(await answer(await post(first.headers, first.body))).toEqual({
        status: 200,
        body: { status: 'accepted' },
      })
      const retry = await signed(ours.privateJwk, url, payload) // fresh nonce, same bytes
      expect(await answer(await post(retry.headers, retry.body))).toEqual({
        status: 200,
        body: { status: 'duplicate' },
      })
      expect(publishedLines(payload.idempotency_key)).toHaveLength(1)
    })

    it('accepts a delivery signed by an independent RFC 9421 signer once', async () => {
      const payload = envelope()
      const body = JSON.stringify(payload)
      expect(await answer(await post(independentlySigned(theirs, url, body), body))).toEqual({
        status: 200,
        body: { status: 'accepted' },
      })
      expect(await answer(await post(independentlySigned(theirs, url, body), body))).toEqual({
        status: 200,
        body: { status: 'duplicate' },
      })
      expect(publishedLines(payload.idempotency_key)).toHaveLength(1)
    })

    it('delivers through the adwire sender (outbox, retries, signing) exactly once', async () => {
      const sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: ours.privateJwk })
      sender.start()
      try {
        const registration = { channel: 'adcp', config: { url, operation_id: 'op_sender' } } as const
        const taskId = `task_${crypto.randomUUID()}`
        const task = sender.task(registration, {
          task_id: taskId,
          task_type: 'get_products',
          status: 'submitted',
        })
        await task.update('working', { result: { percentage: 40 } })
        await expect.poll(() => publishedLines(taskId).length, { timeout: 10_000 }).toBe(1)
      } finally {
        await sender.stop()
      }
    })

    it('refuses a body changed after signing: 401 webhook_signature_digest_mismatch, nothing published', async () => {
      const payload = envelope()
      const delivery = await signed(ours.privateJwk, url, payload)
      const tampered = delivery.body.replace('"percentage":10', '"percentage":99')
      const response = await post(delivery.headers, tampered)
      expect(await answer(response)).toMatchObject({
        status: 401,
        body: { error: { code: 'webhook_signature_digest_mismatch' } },
      })
      expect(response.headers.get('www-authenticate')).toBe(
        'Signature error="webhook_signature_digest_mismatch"',
      )
      // The independent signer's signature, with the body and its digest both replaced: the digest is covered.
      const forged = independentlySigned(theirs, url, delivery.body)
      forged['content-digest'] = independentlySigned(theirs, url, tampered)['content-digest']!
      expect((await answer(await post(forged, tampered))).body.error?.code).toBe('webhook_signature_invalid')
      expect(publishedLines(payload.idempotency_key)).toHaveLength(0)
    })

    it('answers 409 idempotency_key_reused for a changed payload under a used key', async () => {
      const payload = envelope()
      const first = await signed(ours.privateJwk, url, payload)
      expect((await post(first.headers, first.body)).status).toBe(200)
      const changed = await signed(ours.privateJwk, url, { ...payload, result: { percentage: 80 } })
      expect(await answer(await post(changed.headers, changed.body))).toMatchObject({
        status: 409,
        body: { error: { code: 'idempotency_key_reused' } },
      })
      expect(publishedLines(payload.idempotency_key)).toHaveLength(1)
    })

    it('answers 413 to a body over 1 MiB and 415 to a non-JSON content type', async () => {
      const large = await signed(
        ours.privateJwk,
        url,
        envelope({ result: { note: 'x'.repeat(1024 * 1024) } }),
      )
      expect((await post(large.headers, large.body)).status).toBe(413)
      const text = await signed(ours.privateJwk, url, envelope(), 'text/plain')
      expect((await post(text.headers, text.body)).status).toBe(415)
    })

    it(
      'keeps its dedup records across a restart on the same DATA_DIR',
      async () => {
        const payload = envelope()
        const first = await signed(ours.privateJwk, url, payload)
        expect((await post(first.headers, first.body)).status).toBe(200)
        await example.stop()
        example = await startExample(dir, {
          JWKS_FILE: path.join(work, 'seller-jwks.json'),
          DATA_DIR: path.join(work, 'data'),
        })
        url = `${example.origin}${WEBHOOK_PATH}`
        const retry = await signed(ours.privateJwk, url, payload)
        expect(await answer(await post(retry.headers, retry.body))).toEqual({
          status: 200,
          body: { status: 'duplicate' },
        })
        expect(publishedLines(payload.idempotency_key)).toHaveLength(0) // the new process never published it
      },
      2 * STARTUP_MS,
    )
  })
}

/** For the Express and Fastify examples: buyer-signed requests on /adcp/*, the verified signer handed to the route. */
export function describeSignedRequests(name: string, dir: string): void {
  describe(`${name} example: buyer-signed requests`, () => {
    let buyer: { privateJwk: AdcpJwk; publicJwk: AdcpJwk }
    let work: string
    let example: RunningExample

    beforeAll(async () => {
      buyer = await generateSigningKey({ alg: 'ed25519', kid: 'buyer-1', adcpUse: 'request-signing' })
      work = mkdtempSync(path.join(tmpdir(), `adwire-example-${name}-requests-`))
      writeFileSync(path.join(work, 'seller-jwks.json'), JSON.stringify({ keys: [] }))
      writeFileSync(path.join(work, 'buyer-jwks.json'), JSON.stringify({ keys: [buyer.publicJwk] }))
      example = await startExample(dir, {
        JWKS_FILE: path.join(work, 'seller-jwks.json'),
        BUYER_JWKS_FILE: path.join(work, 'buyer-jwks.json'),
        DATA_DIR: path.join(work, 'data'),
      })
    }, STARTUP_MS)
    afterAll(async () => {
      await example?.stop()
      if (work) rmSync(work, { recursive: true, force: true })
    })

    const send = async (payload: unknown, tamper = false) => {
      const url = `${example.origin}/adcp/create_media_buy`
      const body = JSON.stringify(payload)
      const message = await signRequest(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { key: buyer.privateJwk, profile: '3.2' },
      )
      return fetch(url, {
        method: 'POST',
        headers: message.headers,
        body: tamper ? body.replace('1', '2') : body,
      })
    }

    it('hands the verified signer and the parsed body to the route', async () => {
      const response = await send({ brand: { domain: 'acme.example' }, budget: 1 })
      expect(await response.json()).toEqual({
        operation: 'create_media_buy',
        signer: 'buyer-1',
        body: { brand: { domain: 'acme.example' }, budget: 1 },
      })
    })

    it('answers 401 request_signature_digest_mismatch to a body changed after signing', async () => {
      const response = await send({ budget: 1 }, true)
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(
        'Signature error="request_signature_digest_mismatch"',
      )
    })
  })
}
