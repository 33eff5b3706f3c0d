/**
 * The seller's review step (BUY_REVIEW=always): create_media_buy with a push_notification_config answers
 * `submitted` with a task_id and no media_buy_id, then pushes `working` and `completed` (the full create
 * response, its media_buy_id readable through get_media_buys) to a real receiver from @adwire/webhooks that
 * verifies the RFC 9421 signatures with the key it finds through the agent's brand.json; operation_id and
 * context come back verbatim; without an operation_id the pushes carry the task id as one, and the buyer can poll get_task_status too. Push URLs that are not https or point at private addresses are refused.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { brandJsonResolver } from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import { openSqliteStores, type SqliteStores } from '@adwire/store-sqlite'
import { createWebhookReceiver, type ReceivedEvent } from '@adwire/webhooks'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  BUYER_TOKEN,
  buyRequest,
  expectOfficial,
  mcpFails,
  mcpOk,
  startTestAgent,
  tempDir,
  until,
} from '../test-support.js'

let agent: RunningSalesAgent
let stores: SqliteStores
let server: Server
let hooks: string
const events: ReceivedEvent[] = []

beforeAll(async () => {
  agent = await startTestAgent({ BUY_REVIEW: 'always' }, { senderConcurrency: 1 })
  stores = openSqliteStores({ path: join(tempDir(), 'receiver.sqlite') })
  const keys = brandJsonResolver({
    agentUrl: agent.publicUrl,
    fetch: createSafeFetch({ allowHttp: true, allowLoopback: true }),
  })
  const receiver = createWebhookReceiver({
    registration: () => ({ id: 'buyer', auth: { mode: 'rfc9421', keys }, shape: 'mcp' }),
    claims: stores.claims,
    convergence: stores.convergence,
    replayStore: stores.replay,
    publish: async (event) => void events.push(event),
  })
  server = await new Promise<Server>((resolve) => {
    const started = serve(
      { fetch: (request) => receiver.handle(request), port: 0, hostname: '127.0.0.1' },
      () => resolve(started as Server),
    ) as Server
  })
  hooks = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
})

afterAll(async () => {
  await agent.close()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  stores.close()
})

describe('a buy in the seller review', () => {
  it('answers submitted, then pushes working and completed with the buy', async () => {
    const context = { correlation_id: 'review-1' }
    const operationId = crypto.randomUUID()
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        context,
        push_notification_config: { url: `${hooks}/create`, operation_id: operationId },
      }),
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted).toMatchObject({
      status: 'submitted',
      task_id: expect.stringMatching(/^task_/),
      context,
    })
    expect(submitted.media_buy_id).toBeUndefined()
    await until(() => events.filter((event) => event.taskId === submitted.task_id).length >= 2)
    const pushes = events.filter((event) => event.taskId === submitted.task_id)
    expect(pushes.map((event) => event.status)).toEqual(['working', 'completed'])
    for (const push of pushes) {
      expect(push.operationId).toBe(operationId)
      expect(push.payload.context).toEqual(context)
      expect(push.taskType).toBe('create_media_buy')
      expectOfficial('core/mcp-webhook-payload.json', push.payload)
    }
    const result = pushes[1]!.data!
    expectOfficial('media-buy/create-media-buy-response.json', result)
    const polled = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_task_status',
      { task_id: submitted.task_id, include_result: true, include_history: true },
      'protocol/get-task-status-response.json',
    )
    expect(polled).toMatchObject({ task_type: 'create_media_buy', status: 'completed', has_webhook: true })
    expect(polled.result.media_buy_id).toBe(result.media_buy_id)
    expect(polled.history.map((entry: { data: { status: string } }) => entry.data.status)).toEqual([
      'submitted',
      'working',
      'completed',
    ])
    await mcpFails(agent, BUYER_TOKEN, 'get_task_status', { task_id: 'task_unknown' }, 'REFERENCE_NOT_FOUND')
    const read = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [result.media_buy_id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0]).toMatchObject({ media_buy_id: result.media_buy_id, context })
  })

  it('answers submitted without an operation_id too: the buyer polls get_task_status to the buy, and the pushes carry the task id as operation_id', async () => {
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({ push_notification_config: { url: `${hooks}/no-op` } }),
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted.status).toBe('submitted')
    let polled: Record<string, unknown> = {}
    for (let attempt = 0; attempt < 100 && polled.status !== 'completed'; attempt++) {
      polled = await mcpOk(
        agent,
        BUYER_TOKEN,
        'get_task_status',
        { task_id: submitted.task_id, include_result: true },
        'protocol/get-task-status-response.json',
      )
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(polled.status).toBe('completed')
    expect((polled.result as { media_buy_id: string }).media_buy_id).toMatch(/^mb_/)
    // The pushes come too, their operation_id the task id (the buyer gave none; the URL is never read).
    for (let attempt = 0; attempt < 100; attempt++) {
      if (events.some((event) => event.taskId === submitted.task_id && event.status === 'completed')) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const pushed = events.filter((event) => event.taskId === submitted.task_id)
    expect(pushed.map((event) => event.status)).toEqual(['working', 'completed'])
    for (const event of pushed) expect(event.operationId).toBe(submitted.task_id)
  })
})

describe('push URLs', () => {
  it('refuses http and private addresses unless ALLOW_INSECURE_WEBHOOK_URLS is on', async () => {
    const strict = await startTestAgent({ ALLOW_INSECURE_WEBHOOK_URLS: '0' })
    try {
      for (const [field, url] of [
        ['push_notification_config', 'http://buyer.example/hook'],
        ['push_notification_config', 'https://10.0.0.8/hook'],
        ['reporting_webhook', 'https://127.0.0.1/report'],
      ] as const) {
        const registration =
          field === 'reporting_webhook'
            ? {
                url,
                authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(40) },
                reporting_frequency: 'daily',
              }
            : { url, operation_id: 'op-1' }
        const error = await mcpFails(
          strict,
          BUYER_TOKEN,
          'create_media_buy',
          buyRequest({ [field]: registration }),
          'INVALID_REQUEST',
        )
        expect(error.field).toBe(`${field}.url`)
      }
    } finally {
      await strict.close()
    }
  })
})
