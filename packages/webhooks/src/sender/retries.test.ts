import { MemoryReplayStore } from '@adwire/http-signatures'
import { parseSignatureInput } from '@adwire/http-signatures/internal'
import { describe, expect, it } from 'vitest'
import { reply, senderTestKit } from '../testing/sender.js'
import type { WebhookRegistration } from './types.js'

const kit = senderTestKit('seller-retry-test')
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

describe('createWebhookSender: retries', () => {
  it('503 twice then 200: the same key and bytes, a fresh nonce and created on every attempt', async () => {
    const buyer = await endpoint()
    buyer.script(reply(503), reply(503))
    const { sender, clock, outbox } = setup({ retry: { baseDelaySeconds: 2, jitter: 0 } })
    const idempotencyKey = await sender.notify(registration(`${buyer.origin}/retry`), working)
    const replayStore = new MemoryReplayStore()
    const delays: number[] = []
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await sender.drain()
      await verify(buyer.requests.at(-1)!, replayStore, clock.now())
      const [pending] = await outbox.pending()
      if (pending) {
        delays.push(pending.nextAttemptAt - clock.now())
        clock.set(pending.nextAttemptAt)
      }
    }
    expect(delays).toEqual([2, 4])
    expect(buyer.requests).toHaveLength(3)
    expect(new Set(buyer.requests.map((request) => request.text)).size).toBe(1)
    expect(JSON.parse(buyer.requests[0]!.text).idempotency_key).toBe(idempotencyKey)
    const inputs = buyer.requests.map(
      (request) => parseSignatureInput(request.headers['signature-input']!).params,
    )
    expect(new Set(inputs.map((params) => params.nonce)).size).toBe(3)
    const firstCreated = inputs[0]!.created!
    expect(inputs.map((params) => params.created)).toEqual([0, 2, 6].map((offset) => firstCreated + offset))
    expect(
      (await sender.activity('op_7f3a'))
        .reverse()
        .map((row) => [row.attempt, row.status, row.http_status_code]),
    ).toEqual([
      [1, 'failed', 503],
      [2, 'failed', 503],
      [3, 'success', 200],
    ])
  })

  it('backs off exponentially with jitter, capped, and never attempts past the horizon', async () => {
    const buyer = await endpoint({ fallback: reply(500) })
    const { sender, clock, outbox } = setup({
      retryHorizonSeconds: 200,
      retry: { baseDelaySeconds: 10, maxDelaySeconds: 40, jitter: 0.5 },
      random: () => 0.5,
    })
    const start = clock.now()
    await sender.notify(registration(`${buyer.origin}/horizon`), working)
    const delays: number[] = []
    for (;;) {
      await sender.drain()
      const [pending] = await outbox.pending()
      if (!pending) break
      delays.push(pending.nextAttemptAt - clock.now())
      clock.set(pending.nextAttemptAt)
    }
    // 10, 20, 40, 40, 40 reduced by a quarter (jitter 0.5 × random 0.5), then the rest of the horizon.
    expect(delays).toEqual([7.5, 15, 30, 30, 30, 30, 30, 27.5])
    expect(buyer.requests).toHaveLength(9)
    const activity = await sender.activity('op_7f3a')
    expect(activity).toHaveLength(9)
    expect(Math.max(...activity.map((row) => row.at))).toBe(start + 200)
    expect(activity[0]).toMatchObject({ status: 'failed', http_status_code: 500, attempt: 9 })
    expect(activity[0]!.error_message).toContain('retry horizon reached')
  })

  it('honours Retry-After on 429 and 503, up to its cap', async () => {
    const buyer = await endpoint()
    buyer.script(reply(429, { 'retry-after': '120' }), reply(503, { 'retry-after': '999999' }))
    const { sender, clock, outbox } = setup({ retry: { maxRetryAfterSeconds: 3_600, jitter: 0 } })
    await sender.notify(registration(`${buyer.origin}/later`), working)
    await sender.drain()
    expect((await outbox.pending())[0]!.nextAttemptAt).toBe(clock.now() + 120)
    clock.advance(120)
    await sender.drain()
    expect((await outbox.pending())[0]!.nextAttemptAt).toBe(clock.now() + 3_600)
  })

  it('409 stops retrying that key; other 4xx and redirects fail at once', async () => {
    const target = await endpoint()
    const buyer = await endpoint()
    buyer.script(
      reply(
        409,
        { 'content-type': 'application/json' },
        '{"error":{"code":"idempotency_conflict","message":"x"}}',
      ),
      reply(400),
      reply(307, { location: `${target.origin}/elsewhere` }),
    )
    const { sender, clock, outbox } = setup()
    for (const path of ['conflict', 'bad', 'redirect']) {
      await sender.notify(registration(`${buyer.origin}/${path}`), working)
      await sender.drain()
    }
    clock.advance(3_600)
    await sender.drain()
    expect(buyer.requests).toHaveLength(3)
    expect(target.requests).toHaveLength(0)
    expect(await outbox.pending()).toEqual([])
    const rows = (await sender.activity('op_7f3a')).reverse()
    expect(rows.map((row) => [row.status, row.http_status_code])).toEqual([
      ['failed', 409],
      ['failed', 400],
      ['failed', 307],
    ])
    expect(rows[0]!.error_message).toContain('idempotency_conflict')
  })

  it('401, with or without a webhook_* signature error: retried with back-off and recorded, the push and the destination kept', async () => {
    const buyer = await endpoint()
    const challenge = { 'www-authenticate': 'Signature error="webhook_signature_key_unknown"' }
    buyer.script(reply(401), reply(200), reply(401, challenge), reply(401, challenge), reply(200), reply(200))
    const { sender, clock, outbox } = setup({ retry: { baseDelaySeconds: 2, jitter: 0 } })
    await sender.notify(registration(`${buyer.origin}/plain`), working)
    await sender.drain()
    const [retrying] = await outbox.pending()
    expect(retrying?.attempts).toBe(1)
    clock.set(retrying!.nextAttemptAt)
    await sender.drain()
    await sender.notify(registration(`${buyer.origin}/sig`), { ...working, status: 'completed', result: {} })
    const delays: number[] = []
    for (;;) {
      await sender.drain()
      const [pending] = await outbox.pending()
      if (!pending) break
      delays.push(pending.nextAttemptAt - clock.now())
      clock.set(pending.nextAttemptAt)
    }
    expect(delays).toEqual([2, 4])
    // The destination still takes new pushes.
    await sender.notify(registration(`${buyer.origin}/after`), working)
    await sender.drain()
    const replayStore = new MemoryReplayStore()
    for (const request of buyer.requests) await verify(request, replayStore, clock.now())
    expect(buyer.requests.map((request) => new URL(request.url, buyer.origin).pathname)).toEqual([
      '/plain',
      '/plain',
      '/sig',
      '/sig',
      '/sig',
      '/after',
    ])
    expect(new Set(buyer.requests.slice(2, 5).map((request) => request.text)).size).toBe(1)
    const rows = (await sender.activity('op_7f3a')).reverse()
    expect(rows.map((row) => [row.status, row.http_status_code, row.attempt])).toEqual([
      ['failed', 401, 1],
      ['success', 200, 2],
      ['failed', 401, 1],
      ['failed', 401, 2],
      ['success', 200, 3],
      ['success', 200, 1],
    ])
    expect(rows[0]!.error_message).toContain('transient')
    expect(rows[2]!.error_message).toContain('webhook_signature_key_unknown')
    expect(rows[2]!.error_message).toContain('transient')
    expect(await outbox.pending()).toEqual([])
  })

  it('records connection errors and timeouts, and retries them', async () => {
    const closed = await endpoint()
    const url = `${closed.origin}/gone`
    await closed.close()
    const slow = await endpoint({ fallback: () => undefined })
    const { sender, outbox } = setup({ timeoutMs: 200, leaseSeconds: 1 })
    await sender.notify(registration(url), working)
    await sender.notify(registration(`${slow.origin}/slow`), working)
    await sender.drain()
    const rows = await sender.activity('op_7f3a')
    expect(rows.map((row) => row.status).sort()).toEqual(['connection_error', 'timeout'])
    expect(rows.every((row) => row.http_status_code === null)).toBe(true)
    expect(rows.find((row) => row.status === 'connection_error')!.error_message).toContain('ECONNREFUSED')
    expect(await outbox.pending()).toHaveLength(2)
  })
})
