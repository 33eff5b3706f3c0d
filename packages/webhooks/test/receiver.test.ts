import { readConformanceJson } from '@adwire/conformance'
import { MemoryReplayStore } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import { MemoryClaimStore, type Registration, type WebhookReceiverOptions } from '../src/index.js'
import {
  answer,
  envelope,
  HMAC_SECRET,
  hmacSigned as hmacSignedTo,
  NOW,
  receiverWith,
  sellerKey,
  signed as signedBy,
  URL_BASE,
} from '../src/testing/receiver.js'

const BEARER = 'bearer-token-for-tests-0123456789abcdef'
const key = sellerKey()

/** A receiver on memory stores with one registration per mode and shape, addressed by id. */
function setup(overrides: Partial<WebhookReceiverOptions> = {}) {
  const { jwks } = key
  const registrations: Registration[] = [
    {
      id: 'sig',
      auth: { mode: 'rfc9421', keys: jwks },
      sender: 'https://seller.example.com/mcp',
      shape: 'mcp',
    },
    { id: 'hmac', auth: { mode: 'hmac', secret: HMAC_SECRET }, shape: 'mcp' },
    { id: 'bearer', auth: { mode: 'bearer', token: BEARER }, shape: 'mcp' },
    { id: 'tok', auth: { mode: 'rfc9421', keys: jwks }, shape: 'mcp', token: 'echo-token-0123456789' },
    { id: 'a2a', auth: { mode: 'rfc9421', keys: jwks }, shape: 'a2a' },
    { id: 'plist', auth: { mode: 'rfc9421', keys: jwks }, shape: 'property-list' },
  ]
  return receiverWith(registrations, overrides)
}

/** A delivery signed with RFC 9421 as a seller sends it: a fresh nonce on every call. */
const signed = (registration: string, payload: unknown) => signedBy(key, registration, payload)
const hmacSigned = (payload: unknown) => hmacSignedTo('hmac', payload)

const bearer = (payload: unknown, token = BEARER) =>
  new Request(`${URL_BASE}/bearer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })

describe('receiver: the response table', () => {
  it('publishes a first delivery once and acknowledges it with 200', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    expect(await answer(await receiver.handle(await signed('sig', payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({
      registrationId: 'sig',
      sender: 'https://seller.example.com/mcp',
      idempotencyKey: payload.idempotency_key,
      taskId: payload.task_id,
      status: 'working',
      terminal: false,
      data: { percentage: 10 },
      reemission: false,
      takeover: false,
    })
  })

  it('marks a delivery that takes over an owner whose lease ran out (it may already have published)', async () => {
    const claims = new MemoryClaimStore()
    const replayStore = new MemoryReplayStore()
    // The first owner never acknowledges: its publish hangs, as if the process had died right after it.
    const stuck = setup({ claims, replayStore, publish: () => new Promise<void>(() => {}) })
    const payload = envelope()
    void stuck.receiver.handle(await signed('sig', payload))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const inLease = setup({ claims, replayStore, now: () => NOW + 10 })
    expect((await inLease.receiver.handle(await signed('sig', payload))).status).toBe(503)
    expect(inLease.published).toEqual([])
    const after = setup({ claims, replayStore, now: () => NOW + 31 })
    expect(await answer(await after.receiver.handle(await signed('sig', payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(after.published.map((event) => [event.idempotencyKey, event.takeover])).toEqual([
      [payload.idempotency_key, true],
    ])
  })

  it('answers a retry of a completed delivery with 200 and does not publish again', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    await receiver.handle(await signed('sig', payload))
    // A retry: the same bytes, a fresh signature and nonce.
    expect(await answer(await receiver.handle(await signed('sig', payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published).toHaveLength(1)
  })

  it('answers 503 with Retry-After while an identical delivery is being published, never a second publisher', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    const { receiver } = setup({
      publish: async () => {
        calls += 1
        await gate
      },
    })
    const payload = envelope()
    const first = receiver.handle(await signed('sig', payload))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const second = await receiver.handle(await signed('sig', payload))
    expect(second.status).toBe(503)
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
    release()
    expect((await first).status).toBe(200)
    expect(calls).toBe(1)
  })

  it('answers 409 for the same key with a changed payload and keeps the first binding (3.2)', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    await receiver.handle(await signed('sig', payload))
    const changed = { ...payload, result: { percentage: 99 } }
    expect(await answer(await receiver.handle(await signed('sig', changed)))).toMatchObject({
      status: 409,
      body: { error: { code: 'idempotency_key_reused' } },
    })
    expect(await answer(await receiver.handle(await signed('sig', payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published).toHaveLength(1)
  })

  it('lets the first copy win with 2xx in 3.1 mode', async () => {
    const { receiver, published } = setup({ protocol: '3.1' })
    const payload = envelope()
    await receiver.handle(await signed('sig', payload))
    const changed = { ...payload, result: { percentage: 99 } }
    expect((await receiver.handle(await signed('sig', changed))).status).toBe(200)
    expect(published.map((event) => event.data)).toEqual([{ percentage: 10 }])
  })

  it('answers 429 when the sender holds too many keys', async () => {
    const { receiver } = setup({ limits: { maxRecordsPerSender: 2 } })
    expect((await receiver.handle(await signed('sig', envelope()))).status).toBe(200)
    expect((await receiver.handle(await signed('sig', envelope()))).status).toBe(200)
    const third = await receiver.handle(await signed('sig', envelope()))
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBeTruthy()
  })

  it('answers 503 and acknowledges nothing when the store is unreachable', async () => {
    const broken = new MemoryClaimStore()
    broken.claim = async () => {
      throw new Error('connection refused')
    }
    const { receiver, published } = setup({ claims: broken })
    const response = await receiver.handle(await signed('sig', envelope()))
    expect(response.status).toBe(503)
    expect(published).toHaveLength(0)
  })

  it('answers 503 when publishing fails, and publishes on the retry', async () => {
    let fail = true
    const published: string[] = []
    const { receiver } = setup({
      publish: async (event) => {
        if (fail) throw new Error('downstream down')
        published.push(event.idempotencyKey)
      },
    })
    const payload = envelope()
    expect((await receiver.handle(await signed('sig', payload))).status).toBe(503)
    fail = false
    expect((await receiver.handle(await signed('sig', payload))).status).toBe(200)
    expect(published).toEqual([payload.idempotency_key])
  })

  it('refuses other content types with 415 and oversize bodies with 413, before verifying', async () => {
    const { receiver, logs } = setup({ limits: { maxBodyBytes: 100 } })
    const text = new Request(`${URL_BASE}/sig`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    })
    expect((await receiver.handle(text)).status).toBe(415)
    const big = await signed('sig', envelope({ message: 'x'.repeat(200) }))
    expect((await receiver.handle(big)).status).toBe(413)
    expect(logs.map((entry) => entry.code)).toEqual(['unsupported_media_type', 'payload_too_large'])
  })

  it('answers 404 for an unknown registration and 405 for GET', async () => {
    const { receiver } = setup()
    expect((await receiver.handle(new Request(`${URL_BASE}/nope`, { method: 'POST' }))).status).toBe(404)
    expect((await receiver.handle(new Request(`${URL_BASE}/sig`))).status).toBe(405)
  })
})

describe('receiver: authentication', () => {
  it('rejects a forged signature with 401 and WWW-Authenticate naming the code', async () => {
    const { receiver, published } = setup()
    const request = await signed('sig', envelope())
    const tampered = new Request(request.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(envelope()),
    })
    const response = await receiver.handle(tampered)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      'Signature error="webhook_signature_digest_mismatch"',
    )
    expect(published).toHaveLength(0)
  })

  it('rejects a replayed request (same nonce) with webhook_signature_replayed', async () => {
    const { receiver } = setup()
    const request = await signed('sig', envelope())
    const copy = request.clone()
    expect((await receiver.handle(request)).status).toBe(200)
    const replay = await receiver.handle(copy)
    expect(replay.status).toBe(401)
    expect(replay.headers.get('www-authenticate')).toBe('Signature error="webhook_signature_replayed"')
  })

  it('caps a signing key by rate: 5,000 deliveries a second by default (2,100,000 live nonces), not 100,000 nonces', async () => {
    const rateAbuse = 'Signature error="webhook_signature_rate_abuse"'
    const filled = (count: number) => {
      const replayStore = new MemoryReplayStore()
      replayStore.fill('seller-key-1', count, NOW + 360)
      return replayStore
    }
    // The former default (100,000 live nonces, 278 deliveries a second over 360 s) no longer refuses the key.
    expect(
      (await setup({ replayStore: filled(100_000) }).receiver.handle(await signed('sig', envelope()))).status,
    ).toBe(200)
    // limits.maxNonceRatePerKey: 2 a second holds at most 2 × 420 = 840 nonces; the next delivery is refused.
    const slow = (count: number) => setup({ replayStore: filled(count), limits: { maxNonceRatePerKey: 2 } })
    expect((await slow(839).receiver.handle(await signed('sig', envelope()))).status).toBe(200)
    const refused = await slow(840).receiver.handle(await signed('sig', envelope()))
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe(rateAbuse)
    // An explicit count cap wins over the rate.
    const counted = setup({
      replayStore: filled(10),
      limits: { maxNonceRatePerKey: 1_000, maxNoncesPerKey: 10 },
    })
    expect(
      (await counted.receiver.handle(await signed('sig', envelope()))).headers.get('www-authenticate'),
    ).toBe(rateAbuse)
  })

  it('refuses a nonce limit that is not a positive number with webhook_receiver_options_invalid', () => {
    for (const limits of [
      { maxNonceRatePerKey: 0 },
      { maxNonceRatePerKey: Number.NaN },
      { maxNonceRatePerKey: -5 },
      { maxNoncesPerKey: 0 },
      { maxNoncesPerKey: 1.5 },
    ]) {
      expect(() => setup({ limits })).toThrow(
        expect.objectContaining({ code: 'webhook_receiver_options_invalid' }),
      )
    }
  })

  it('rejects duplicate JSON keys after a valid signature as webhook_body_malformed', async () => {
    const { receiver, published } = setup()
    const body = JSON.stringify(envelope()).replace(
      '"status":"working"',
      '"status":"working","status":"completed"',
    )
    const response = await receiver.handle(await signed('sig', body))
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Signature error="webhook_body_malformed"')
    expect(published).toHaveLength(0)
  })

  const a2aPayload = () =>
    (
      readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
        vectors: Array<{ format: string; payload: unknown }>
      }
    ).vectors.find((vector) => vector.format === 'a2a')!.payload

  it('refuses an unpaired surrogate escape, which has no RFC 8785 form, with 400 invalid_json in every mode', async () => {
    const { receiver, published, logs } = setup()
    const body = (payload: unknown) => JSON.stringify(payload).replace('MARKER', '\\udc00')
    const requests = [
      await signed('sig', body(envelope({ message: 'MARKER' }))),
      await hmacSigned(body(envelope({ message: 'MARKER' }))),
      bearer(body(envelope({ message: 'MARKER' }))),
      await signed(
        'a2a',
        body(a2aPayload())
          .replace(/"id":"/, '"id":"MARKER')
          .replace('MARKER', '\\udc00'),
      ),
    ]
    for (const request of requests) {
      expect(await answer(await receiver.handle(request))).toMatchObject({
        status: 400,
        body: {
          error: { code: 'invalid_json', message: expect.stringContaining('unpaired UTF-16 surrogate') },
        },
      })
    }
    expect(published).toHaveLength(0)
    expect(logs.map((entry) => [entry.outcome, entry.code])).toEqual(
      Array(requests.length).fill(['rejected', 'invalid_json']),
    )
  })

  it('accepts HMAC and Bearer registrations, and keys each sender separately', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    expect((await receiver.handle(await hmacSigned(payload))).status).toBe(200)
    expect((await receiver.handle(bearer(payload))).status).toBe(200)
    expect((await receiver.handle(await signed('sig', payload))).status).toBe(200)
    expect(published.map((event) => event.sender)).toEqual([
      'hmac:hmac',
      'bearer:bearer',
      // The configured sender names the keyspace as it is, whatever the mode.
      'https://seller.example.com/mcp',
    ])
    expect((await receiver.handle(await hmacSigned(payload))).status).toBe(200)
    expect(published).toHaveLength(3)
  })

  it('rejects a wrong HMAC or Bearer credential with 401', async () => {
    const { receiver } = setup()
    const wrongToken = await answer(await receiver.handle(bearer(envelope(), `${BEARER}x`)))
    expect(wrongToken).toMatchObject({ status: 401, body: { error: { code: 'webhook_bearer_invalid' } } })
    const request = await hmacSigned(envelope())
    const tampered = new Request(request.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(envelope()),
    })
    expect(await answer(await receiver.handle(tampered))).toMatchObject({
      status: 401,
      body: { error: { code: 'webhook_hmac_invalid' } },
    })
  })

  it('rejects a delivery authenticated in another mode than registered (webhook_mode_mismatch)', async () => {
    const { receiver } = setup()
    const hmac = await hmacSigned(envelope())
    const asSig = new Request(`${URL_BASE}/sig`, {
      method: 'POST',
      headers: hmac.headers,
      body: await hmac.text(),
    })
    const first = await receiver.handle(asSig)
    expect(first.status).toBe(401)
    expect(first.headers.get('www-authenticate')).toBe('Signature error="webhook_mode_mismatch"')
    const sig = await signed('hmac', envelope())
    expect(await answer(await receiver.handle(sig))).toMatchObject({
      status: 401,
      body: { error: { code: 'webhook_mode_mismatch' } },
    })
  })

  it('checks the registered token in constant time, in addition to the signature', async () => {
    const { receiver } = setup()
    expect(
      (await receiver.handle(await signed('tok', envelope({ token: 'echo-token-0123456789' })))).status,
    ).toBe(200)
    expect(
      await answer(await receiver.handle(await signed('tok', envelope({ token: 'wrong-token-0123456789' })))),
    ).toMatchObject({
      status: 401,
      body: { error: { code: 'webhook_token_invalid' } },
    })
  })

  it('ignores the body signature marker of property-list events for authentication', async () => {
    const { receiver, published } = setup()
    const event = {
      idempotency_key: `whk_${crypto.randomUUID()}`,
      event: 'property_list_changed',
      list_id: 'pl_1',
      resolved_at: '2026-04-18T10:00:00Z',
      signature: 'not-a-real-signature-at-all',
    }
    expect((await receiver.handle(await signed('plist', event))).status).toBe(200)
    expect(published[0]).toMatchObject({
      shape: 'property-list',
      status: 'property_list_changed',
      idempotencyKey: event.idempotency_key,
    })
  })
})

describe('receiver: envelopes', () => {
  const vectors = readConformanceJson('test-vectors/webhook-receiver-envelope.json') as {
    positive: Array<{ id: string; payload: Record<string, unknown> }>
    negative: Array<{ id: string; payload: Record<string, unknown>; expected_error: string }>
  }

  it('accepts the positive envelope vectors; the retry vector is a duplicate', async () => {
    const { receiver, published } = setup()
    const [first, retry] = vectors.positive
    expect(await answer(await receiver.handle(await signed('sig', first!.payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await answer(await receiver.handle(await signed('sig', retry!.payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ taskType: 'media_buy_delivery', status: 'completed' })
  })

  it.each(vectors.negative.map((vector) => [vector.id, vector] as const))(
    'rejects %s before dispatch',
    async (_id, vector) => {
      const { receiver, published } = setup()
      const response = await answer(await receiver.handle(await signed('sig', vector.payload)))
      expect(response).toMatchObject({ status: 400, body: { error: { code: vector.expected_error } } })
      expect(published).toHaveLength(0)
    },
  )

  const extraction = readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
    vectors: Array<{
      id: string
      format: 'mcp' | 'a2a'
      payload: Record<string, unknown>
      expected_data: unknown
    }>
  }
  const complete = extraction.vectors.filter(
    (vector) => vector.format === 'a2a' || typeof vector.payload.idempotency_key === 'string',
  )
  it.each(complete.map((vector) => [vector.id, vector] as const))(
    'publishes the data of payload-extraction %s',
    async (_id, vector) => {
      const { receiver, published } = setup()
      const response = await receiver.handle(
        await signed(vector.format === 'a2a' ? 'a2a' : 'sig', vector.payload),
      )
      expect(response.status).toBe(200)
      expect(published[0]?.data).toEqual(vector.expected_data)
    },
  )

  it('rejects the payload-extraction MCP vectors that lack envelope fields', async () => {
    const { receiver } = setup()
    for (const vector of extraction.vectors.filter((candidate) => !complete.includes(candidate))) {
      expect((await receiver.handle(await signed('sig', vector.payload))).status, vector.id).toBe(400)
    }
  })
})

describe('receiver: terminal convergence', () => {
  it('lets the first terminal win: a re-emission is a duplicate, a later working is stale, another terminal conflicts', async () => {
    const { receiver, published } = setup()
    const task_id = `task_${crypto.randomUUID()}`
    const done = envelope({ task_id, status: 'completed', result: { media_buy_id: 'mb_1' } })
    expect(await answer(await receiver.handle(await signed('sig', done)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    const reemitted = {
      ...done,
      idempotency_key: `whk_${crypto.randomUUID()}`,
      timestamp: '2026-04-18T10:05:00Z',
    }
    expect(await answer(await receiver.handle(await signed('sig', reemitted)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    const late = envelope({ task_id, status: 'working' })
    expect(await answer(await receiver.handle(await signed('sig', late)))).toEqual({
      status: 200,
      body: { status: 'stale' },
    })
    const failed = envelope({
      task_id,
      status: 'failed',
      result: { adcp_error: { code: 'X', message: 'no' } },
    })
    expect(await answer(await receiver.handle(await signed('sig', failed)))).toMatchObject({
      status: 409,
      body: { error: { code: 'terminal_conflict' } },
    })
    expect(published.map((event) => event.status)).toEqual(['completed'])
  })

  it('marks the same notification_id under a new key as a re-emission', async () => {
    const { receiver, published } = setup()
    const first = envelope({ notification_id: 'notif_1' })
    const second = envelope({
      notification_id: 'notif_1',
      task_id: first.task_id,
      result: { percentage: 50 },
    })
    await receiver.handle(await signed('sig', first))
    await receiver.handle(await signed('sig', second))
    expect(published.map((event) => event.reemission)).toEqual([false, true])
  })
})
