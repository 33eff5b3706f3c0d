import {
  generateSigningKey,
  MemoryReplayStore,
  verifyWebhook,
  type GeneratedSigningKey,
} from '@adwire/http-signatures'
import { parseWebhookPayload } from '@adwire/schemas'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from '../memory-stores.js'
import { createWebhookReceiver } from '../receiver/receiver.js'
import type { ReceivedEvent } from '../receiver/types.js'
import { createWebhookSender } from './sender.js'
import { manualClock, reply, startEndpoint, type Responder, type TestEndpoint } from '../testing/sender.js'
import type { WebhookRegistration } from './types.js'

let key: GeneratedSigningKey
beforeAll(async () => {
  key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-a2a-test' })
})

const endpoints: TestEndpoint[] = []
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()))
})

async function endpoint(fallback?: Responder) {
  const started = await startEndpoint(fallback ? { fallback } : {})
  endpoints.push(started)
  return started
}

const a2a = (url: string): WebhookRegistration => ({
  channel: 'a2a',
  config: { id: 'pnc_1', url, token: 'a2a-notification-token-123' },
  context: { correlation_id: 'corr-a2a' },
})

describe('A2A-shape deliveries', () => {
  it('sends a TaskStatusUpdateEvent for interim states and a Task for final states (v0.3, with kind)', async () => {
    const buyer = await endpoint()
    buyer.script(reply(503))
    const clock = manualClock()
    const sender = createWebhookSender({
      outbox: new MemoryOutboxStore(),
      key: key.privateJwk,
      now: clock.now,
      // One delivery at a time, so the buyer sees the two events in the order they were queued (the 503 must
      // meet the interim one); with several workers the arrival order is a race.
      concurrency: 1,
    })
    const registration = a2a(`${buyer.origin}/a2a`)
    await sender.notify(registration, {
      task_id: 'task_9',
      task_type: 'create_media_buy',
      status: 'input-required',
      context_id: 'ctx_9',
      message: 'Need approval',
      result: { reason: 'APPROVAL_REQUIRED' },
    })
    await sender.notify(registration, {
      task_id: 'task_9',
      task_type: 'create_media_buy',
      status: 'completed',
      context_id: 'ctx_9',
      result: { media_buy_id: 'mb_9', packages: [] },
    })
    await sender.drain()
    clock.advance(60)
    await sender.drain()

    const [first, second, retry] = buyer.requests
    expect(retry!.text).toBe(first!.text)
    expect(first!.headers['x-a2a-notification-token']).toBe('a2a-notification-token-123')
    const replayStore = new MemoryReplayStore()
    for (const request of [first!, second!, retry!])
      await verifyWebhook(
        { method: 'POST', url: request.url, headers: request.headers, body: request.body },
        { keys: key.jwks, replayStore, now: clock.now() },
      )

    const interim = JSON.parse(first!.text)
    expect(interim).toMatchObject({
      kind: 'status-update',
      taskId: 'task_9',
      contextId: 'ctx_9',
      final: false,
      status: {
        state: 'input-required',
        timestamp: new Date((clock.now() - 60) * 1000).toISOString(),
        message: {
          kind: 'message',
          role: 'agent',
          parts: [{ kind: 'text', text: 'Need approval' }, { kind: 'data' }],
        },
      },
    })
    expect(parseWebhookPayload(first!.text, { format: 'a2a' })).toMatchObject({
      kind: 'status-update',
      status: 'input-required',
      terminal: false,
      data: { reason: 'APPROVAL_REQUIRED', context: { correlation_id: 'corr-a2a' } },
    })
    const final = JSON.parse(second!.text)
    expect(final).toMatchObject({
      kind: 'task',
      id: 'task_9',
      contextId: 'ctx_9',
      status: { state: 'completed' },
    })
    expect(final.idempotency_key).toBeUndefined()
    expect(parseWebhookPayload(second!.text, { format: 'a2a' })).toMatchObject({
      kind: 'task',
      status: 'completed',
      terminal: true,
      data: { media_buy_id: 'mb_9', context: { correlation_id: 'corr-a2a' } },
    })
    expect((await sender.activity('pnc_1')).map((row) => row.status).sort()).toEqual([
      'failed',
      'success',
      'success',
    ])
  })

  it('refuses a status that is not a task status', async () => {
    const sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk })
    await expect(
      sender.notify(a2a('https://buyer.example/a2a'), { task_id: 't', task_type: 'x', status: 'active' }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
  })
})

describe('sender to the receiver core over HTTP', () => {
  it('publishes each event exactly once through 503s and retries, for both shapes', async () => {
    const published: ReceivedEvent[] = []
    let failures = 2
    const receiver = createWebhookReceiver({
      registration: (request) => {
        const shape = new URL(request.url).pathname.endsWith('/a2a') ? 'a2a' : 'mcp'
        return {
          id: shape,
          auth: { mode: 'rfc9421', keys: key.jwks },
          sender: 'https://seller.example',
          shape,
        }
      },
      claims: new MemoryClaimStore(),
      convergence: new MemoryConvergenceStore(),
      replayStore: new MemoryReplayStore(),
      publish: async (event) => {
        if (failures-- > 0) throw new Error('downstream unavailable')
        published.push(event)
      },
    })
    const buyer = await endpoint(async (request, response) => {
      const answer = await receiver.handle(
        new Request(request.url, { method: request.method, headers: request.headers, body: request.body }),
      )
      response.writeHead(answer.status, Object.fromEntries(answer.headers))
      response.end(await answer.text())
    })
    const sender = createWebhookSender({
      outbox: new MemoryOutboxStore(),
      key: key.privateJwk,
      retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.2, maxRetryAfterSeconds: 0.1 },
      pollIntervalMs: 20,
    })
    sender.start()
    let mcpKey: string | undefined
    try {
      mcpKey = await sender.notify(
        { channel: 'adcp', config: { url: `${buyer.origin}/hooks/mcp`, operation_id: 'op_e2e' } },
        { task_id: 'task_e2e', task_type: 'create_media_buy', status: 'working', result: { percentage: 10 } },
      )
      await sender.notify(a2a(`${buyer.origin}/hooks/a2a`), {
        task_id: 'task_a2a',
        task_type: 'create_media_buy',
        status: 'working',
      })
      const deadline = Date.now() + 10_000
      while (published.length < 2 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      await sender.stop()
    }
    expect(published.map((event) => [event.shape, event.taskId]).sort()).toEqual([
      ['a2a', 'task_a2a'],
      ['mcp', 'task_e2e'],
    ])
    expect(published.find((event) => event.shape === 'mcp')?.idempotencyKey).toBe(mcpKey)
    const statuses = [...(await sender.activity('op_e2e')), ...(await sender.activity('pnc_1'))].map(
      (row) => row.status,
    )
    expect(statuses.filter((status) => status === 'success')).toHaveLength(2)
    expect(statuses.filter((status) => status === 'failed').length).toBeGreaterThanOrEqual(2)
    expect(buyer.requests.length).toBeGreaterThanOrEqual(4)
  })
})
