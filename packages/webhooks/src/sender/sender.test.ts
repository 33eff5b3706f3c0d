import { MemoryReplayStore, verifyBearerWebhook, verifyHmacWebhook } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import { WebhookError } from '../errors.js'
import { reply, senderTestKit } from '../testing/sender.js'
import type { WebhookRegistration } from './types.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const SECRET = 'hmac-secret-for-the-sender-tests-0123456789'
const BEARER = 'bearer-credential-for-the-sender-tests-0123'

const kit = senderTestKit('seller-sender-test')
const { endpoint, setup, verify } = kit

const registration = (url: string, extra: Record<string, unknown> = {}): WebhookRegistration => ({
  channel: 'adcp',
  config: { url, operation_id: 'op_7f3a', ...extra },
  context: { correlation_id: 'corr-1', nested: { a: [1, 2] } },
})

const working = {
  task_id: 'task_1',
  task_type: 'create_media_buy',
  status: 'working',
  result: { percentage: 40 },
}

describe('createWebhookSender: the MCP envelope', () => {
  it('builds, signs and delivers the envelope, echoing operation_id, context and token', async () => {
    const buyer = await endpoint()
    const { sender, clock, outbox } = setup()
    const idempotencyKey = await sender.notify(
      registration(`${buyer.origin}/hooks/op?route=1`, { token: 'echo-token-0123456789' }),
      { ...working, message: 'Creating the buy', context_id: 'ctx_1' },
    )
    expect(idempotencyKey).toMatch(UUID_V4)
    expect(await outbox.pending()).toHaveLength(1)
    await sender.drain()

    expect(buyer.requests).toHaveLength(1)
    const [request] = buyer.requests
    expect(request!.method).toBe('POST')
    expect(request!.url).toBe(`${buyer.origin}/hooks/op?route=1`)
    expect(request!.headers['content-type']).toBe('application/json')
    expect(
      Object.keys(request!.headers).filter((name) => /^(x-adwire|x-adcp|authorization)/.test(name)),
    ).toEqual([])
    expect(request!.text).toBe(JSON.stringify(JSON.parse(request!.text)))
    expect(JSON.parse(request!.text)).toEqual({
      idempotency_key: idempotencyKey,
      operation_id: 'op_7f3a',
      task_id: 'task_1',
      task_type: 'create_media_buy',
      status: 'working',
      timestamp: new Date(clock.now() * 1000).toISOString(),
      message: 'Creating the buy',
      context_id: 'ctx_1',
      context: { correlation_id: 'corr-1', nested: { a: [1, 2] } },
      token: 'echo-token-0123456789',
      result: { percentage: 40 },
    })
    const verified = await verify(request!, new MemoryReplayStore(), clock.now())
    expect(verified.keyid).toBe('seller-sender-test')
    expect(await sender.activity('op_7f3a')).toEqual([
      {
        idempotency_key: idempotencyKey,
        status: 'success',
        http_status_code: 200,
        attempt: 1,
        error_message: null,
        at: clock.now(),
      },
    ])
    expect(await outbox.pending()).toEqual([])
  })

  it('refuses what the envelope schema refuses, before anything is stored', async () => {
    const { sender, outbox } = setup()
    const reg = registration('https://buyer.example/hooks')
    const code = async (promise: Promise<unknown>) => {
      const error = await promise.then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(WebhookError.is(error), String(error)).toBe(true)
      return { code: (error as WebhookError).code, message: (error as WebhookError).message }
    }
    expect(await code(sender.notify(reg, { ...working, status: 'active' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('status'),
    })
    expect((await code(sender.notify(reg, { ...working, task_type: 'not_a_task' }))).code).toBe(
      'INVALID_REQUEST',
    )
    const noOperation: WebhookRegistration = {
      channel: 'adcp',
      config: { url: 'https://buyer.example/hooks' },
    }
    expect(await code(sender.notify(noOperation, working))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('operation_id'),
    })
    expect((await code(sender.notify(registration('ftp://buyer.example/'), working))).code).toBe(
      'INVALID_REQUEST',
    )
    const shortSecret = registration('https://buyer.example/hooks', {
      authentication: { schemes: ['HMAC-SHA256'], credentials: 'too-short' },
    })
    expect((await code(sender.notify(shortSecret, working))).code).toBe('INVALID_REQUEST')
    const twoSchemes = registration('https://buyer.example/hooks', {
      authentication: { schemes: ['HMAC-SHA256', 'Bearer'], credentials: SECRET },
    })
    expect((await code(sender.notify(twoSchemes, working))).code).toBe('INVALID_REQUEST')
    expect(await outbox.pending()).toEqual([])
  })

  it('refuses an event holding an unpaired UTF-16 surrogate, which no receiver can canonicalise (RFC 8785)', async () => {
    const { sender, outbox } = setup()
    const reg = registration('https://buyer.example/hooks')
    const a2a: WebhookRegistration = {
      channel: 'a2a',
      config: { id: 'pnc_1', url: 'https://buyer.example/a2a' },
    }
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => ({
          code: (error as WebhookError).code,
          message: (error as WebhookError).message,
        }),
      )
    const unpaired = {
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('unpaired UTF-16 surrogate'),
    }
    expect(await refusal(sender.notify(reg, { ...working, message: 'rocket \ud83d' }))).toMatchObject(
      unpaired,
    )
    expect(await refusal(sender.notify(reg, { ...working, result: { ['\udc00key']: 1 } }))).toMatchObject(
      unpaired,
    )
    expect(await refusal(sender.notify(a2a, { ...working, message: 'tail \udfff' }))).toMatchObject(unpaired)
    expect(await outbox.pending()).toEqual([])
    // A paired surrogate (one astral character) is fine.
    await sender.notify(reg, { ...working, message: 'rocket \ud83d\ude80' })
    expect(await outbox.pending()).toHaveLength(1)
  })

  it('applies a registration update (new URL) from the next fire; queued retries keep their URL', async () => {
    const oldEndpoint = await endpoint({ fallback: reply(503) })
    const newEndpoint = await endpoint()
    const { sender, clock } = setup()
    const first = await sender.notify(registration(`${oldEndpoint.origin}/a`), working)
    await sender.drain()
    const second = await sender.notify(registration(`${newEndpoint.origin}/b`), {
      ...working,
      status: 'input-required',
    })
    clock.advance(10)
    await sender.drain()
    expect(oldEndpoint.requests.map((request) => JSON.parse(request.text).idempotency_key)).toEqual([
      first,
      first,
    ])
    expect(newEndpoint.requests.map((request) => JSON.parse(request.text).idempotency_key)).toEqual([second])
  })
})

describe('createWebhookSender: legacy authentication only when the buyer asked for it', () => {
  it('HMAC-SHA256: X-ADCP-Signature over the exact bytes, no RFC 9421 headers', async () => {
    const buyer = await endpoint()
    const logs: string[] = []
    const { sender, clock } = setup({ log: (entry) => void logs.push(entry.event) })
    const hmac = registration(`${buyer.origin}/hmac`, {
      authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET },
    })
    await sender.notify(hmac, working)
    await sender.drain()
    expect(logs).toContain('legacy_auth')
    const [request] = buyer.requests
    expect(request!.headers['signature']).toBeUndefined()
    expect(request!.headers['signature-input']).toBeUndefined()
    expect(request!.headers['x-adcp-timestamp']).toBe(String(clock.now()))
    await expect(
      verifyHmacWebhook(
        { headers: request!.headers, body: request!.body },
        { secret: SECRET, now: clock.now() },
      ),
    ).resolves.toEqual({ timestamp: clock.now() })
  })

  it('Bearer: Authorization header only (a read-only task)', async () => {
    const buyer = await endpoint()
    const { sender } = setup()
    await sender.notify(
      registration(`${buyer.origin}/bearer`, {
        authentication: { schemes: ['Bearer'], credentials: BEARER },
      }),
      { ...working, task_type: 'get_products' },
    )
    await sender.drain()
    const [request] = buyer.requests
    await expect(verifyBearerWebhook(request!.headers, BEARER)).resolves.toBeUndefined()
    expect(request!.headers['signature']).toBeUndefined()
    expect(request!.headers['x-adcp-signature']).toBeUndefined()
    expect(Object.keys(request!.headers).some((name) => name.startsWith('x-adwire'))).toBe(false)
  })
})

describe('createWebhookSender: legacy Bearer refused for mutating callbacks', () => {
  const bearer = (url: string) =>
    registration(url, { authentication: { schemes: ['Bearer'], credentials: BEARER } })

  it.each([
    'create_media_buy',
    'update_media_buy',
    'sync_creatives',
    'build_creative',
    'update_property_list',
  ])(
    'refuses Bearer for %s with INVALID_REQUEST, in notify and when the task starts; nothing is queued',
    async (task_type) => {
      const { sender, outbox } = setup()
      await expect(
        sender.notify(bearer('https://buyer.example/h'), { ...working, task_type }),
      ).rejects.toSatisfy(
        (error) => WebhookError.is(error) && error.code === 'INVALID_REQUEST' && /Bearer/.test(error.message),
      )
      expect(() =>
        sender.task(bearer('https://buyer.example/h'), { task_id: 't1', task_type, status: 'submitted' }),
      ).toThrow(WebhookError)
      expect(await outbox.pending()).toEqual([])
    },
  )

  it('keeps HMAC-SHA256 for mutating tasks and Bearer for read-only ones (get_signals, get_products)', async () => {
    const buyer = await endpoint()
    const { sender } = setup()
    const hmac = registration(`${buyer.origin}/hmac`, {
      authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET },
    })
    await sender.notify(hmac, working)
    await sender.notify(bearer(`${buyer.origin}/bearer`), { ...working, task_type: 'get_signals' })
    sender.task(bearer(`${buyer.origin}/bearer`), {
      task_id: 't2',
      task_type: 'get_products',
      status: 'submitted',
    })
    await sender.drain()
    expect(buyer.requests.map((request) => request.url.split('/').pop()).sort()).toEqual(['bearer', 'hmac'])
  })

  it('sends Bearer for a mutating task when refuseBearerForMutatingTasks is false', async () => {
    const buyer = await endpoint()
    const { sender } = setup({ refuseBearerForMutatingTasks: false })
    await sender.notify(bearer(`${buyer.origin}/bearer`), working)
    await sender.drain()
    await expect(verifyBearerWebhook(buyer.requests[0]!.headers, BEARER)).resolves.toBeUndefined()
  })
})
