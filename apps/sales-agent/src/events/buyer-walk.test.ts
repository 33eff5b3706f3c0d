/**
 * A buyer's walk through the official MCP and A2A clients against a running agent whose buys need the
 * seller's review: create_media_buy answers `submitted` and the review's later statuses reach the buyer's
 * receiver (MCP-shape envelopes for push_notification_config, A2A-native events for taskPushNotificationConfig,
 * both when both are registered); the buy's reporting_webhook gets scheduled reports and, once canceled, the
 * final one; get_media_buys with include_webhook_activity then lists those fires for the caller only.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON payloads freely */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  READER_TOKEN,
  a2aSend,
  artifactData,
  buyRequest,
  displayCreative,
  expectOfficial,
  mcpOk,
  newKey,
  startTestAgent,
  until,
} from '../test-support.js'
import { LEGACY_SECRET, startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import type { WebhookEvents } from '@adwire/seller'

let offset = 0
const now = () => Date.now() / 1000 + offset
let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent(
    { BUY_REVIEW: 'always', REVIEW_SECONDS: '0' },
    { now, reportPeriodSeconds: 3600, reportTickMs: 3_600_000 },
  )
  buyer = await startBuyerReceiver(agent.url, now)
  await mcpOk(
    agent,
    BUYER_TOKEN,
    'sync_creatives',
    { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('walk_creative')] },
    'creative/sync-creatives-response.json',
  )
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const ofTask = (taskId: string) => buyer.published.filter((event) => event.taskId === taskId)
const assigned = { creative_assignments: [{ creative_id: 'walk_creative' }] }

describe("a buyer's walk with webhooks", () => {
  it('MCP: submitted, then working and completed pushed; reports on the cadence; final after cancel; webhook_activity', async () => {
    const context = { correlation_id: 'walk-mcp' }
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        {
          context,
          push_notification_config: { url: `${buyer.origin}/hooks/mcp/walk`, operation_id: 'op-walk-1' },
          reporting_webhook: {
            url: `${buyer.origin}/hmac/mcp/walk-reports`,
            reporting_frequency: 'hourly',
            authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
          },
        },
        assigned,
      ),
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    await buyer.waitFor(() => ofTask(submitted.task_id).length === 2)
    const [working, completed] = ofTask(submitted.task_id)
    for (const event of [working!, completed!]) {
      expectOfficial('core/mcp-webhook-payload.json', event.payload)
      expect(event.operationId).toBe('op-walk-1')
      expect(event.payload).toMatchObject({ task_type: 'create_media_buy', context })
    }
    expect([working!.status, completed!.status]).toEqual(['working', 'completed'])
    const created = completed!.payload.result as any
    expectOfficial('media-buy/create-media-buy-response.json', created)
    const id = created.media_buy_id as string

    offset += 3601
    expect(await (agent.runtime.deps.events as WebhookEvents).tick()).toBeGreaterThanOrEqual(1)
    await buyer.waitFor(() =>
      buyer.published.some((event) => event.registrationId === 'hmac-mcp-walk-reports'),
    )
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: id, canceled: true },
      'media-buy/update-media-buy-response.json',
    )
    const reports = () => buyer.published.filter((event) => event.registrationId === 'hmac-mcp-walk-reports')
    await buyer.waitFor(() => reports().length === 2)
    const results = reports().map((event) => event.payload.result as any)
    for (const result of results) expectOfficial('media-buy/media-buy-delivery-webhook-result.json', result)
    expect(results.map((result) => result.notification_type)).toEqual(['scheduled', 'final'])
    expect(results[1].media_buy_deliveries[0]).toMatchObject({ media_buy_id: id, status: 'canceled' })

    await agent.runtime.deps.sender.drain()
    const listed = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [id], include_webhook_activity: true },
      'media-buy/get-media-buys-response.json',
    )
    const activity = listed.media_buys[0].webhook_activity as any[]
    for (const row of activity) expectOfficial('core/webhook-activity-record.json', row)
    expect(activity.map((row) => [row.notification_type, row.status, row.idempotency_key])).toEqual(
      reports()
        .reverse()
        .map((event) => [(event.payload.result as any).notification_type, 'success', event.idempotencyKey]),
    )
    const other = await mcpOk(
      agent,
      READER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [id], include_webhook_activity: true },
      'media-buy/get-media-buys-response.json',
    )
    expect(other.media_buys).toEqual([])
  })

  it('A2A: taskPushNotificationConfig gets A2A-native events, push_notification_config MCP envelopes, both', async () => {
    const task = await a2aSend(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        {
          context: { correlation_id: 'walk-a2a' },
          push_notification_config: { url: `${buyer.origin}/hooks/mcp/walk-a2a`, operation_id: 'op-walk-2' },
        },
        assigned,
      ),
      { url: `${buyer.origin}/hooks/a2a/walk-a2a` },
    )
    const answer = artifactData(task)
    expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    // The receiver shares one keyspace for the seller's registrations: the second channel's terminal
    // observation of the same outcome is a duplicate (delivered, acknowledged, not published twice).
    await buyer.waitFor(() => ofTask(answer.task_id).length === 3)
    const a2aPath = '/hooks/a2a/walk-a2a'
    await until(() => buyer.deliveries.filter((delivery) => delivery.path === a2aPath).length === 2)
    const seen = ofTask(answer.task_id).map((event) => [event.registrationId, event.shape, event.status])
    expect(seen.filter(([id]) => id === 'hooks-mcp-walk-a2a')).toEqual([
      ['hooks-mcp-walk-a2a', 'mcp', 'working'],
      ['hooks-mcp-walk-a2a', 'mcp', 'completed'],
    ])
    expect(seen.filter(([id]) => id === 'hooks-a2a-walk-a2a')).toEqual([
      ['hooks-a2a-walk-a2a', 'a2a', 'working'],
    ])
    const a2aDeliveries = buyer.deliveries.filter((delivery) => delivery.path === a2aPath)
    expect(a2aDeliveries.map((delivery) => [delivery.status, JSON.parse(delivery.answer).status])).toEqual([
      [200, 'accepted'],
      [200, 'duplicate'],
    ])
    const native = JSON.parse(a2aDeliveries[1]!.body)
    expect(native.kind ?? Object.keys(native)[0]).toMatch(/task/)
    expect(JSON.stringify(native)).toContain('completed')
  })

  it('update_media_buy: a reporting_webhook added to an existing buy starts its reports', async () => {
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({}, assigned),
      'media-buy/create-media-buy-response.json',
    )
    expect(created.status).toBe('completed')
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      {
        idempotency_key: newKey(),
        account: ACCOUNT,
        media_buy_id: created.media_buy_id,
        reporting_webhook: {
          url: `${buyer.origin}/hmac/mcp/late-reports`,
          reporting_frequency: 'daily',
          authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
        },
      },
      'media-buy/update-media-buy-response.json',
    )
    offset += 3601
    await (agent.runtime.deps.events as WebhookEvents).tick()
    await buyer.waitFor(() =>
      buyer.published.some((event) => event.registrationId === 'hmac-mcp-late-reports'),
    )
    const report = buyer.published.find((event) => event.registrationId === 'hmac-mcp-late-reports')!
    expect(report.payload.result).toMatchObject({
      notification_type: 'scheduled',
      sequence_number: 1,
      media_buy_deliveries: [{ media_buy_id: created.media_buy_id }],
    })
  })

  it('the scheduler completes a buy whose flight ended and sends its final report instead of a scheduled one', async () => {
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        {
          end_time: new Date((now() + 1800) * 1000).toISOString(),
          reporting_webhook: {
            url: `${buyer.origin}/hmac/mcp/ending-reports`,
            reporting_frequency: 'hourly',
            authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
          },
        },
        assigned,
      ),
      'media-buy/create-media-buy-response.json',
    )
    offset += 3601
    await (agent.runtime.deps.events as WebhookEvents).tick()
    const ending = () => buyer.published.filter((event) => event.registrationId === 'hmac-mcp-ending-reports')
    await buyer.waitFor(() => ending().length === 1)
    await agent.runtime.deps.sender.drain()
    expect(ending()).toHaveLength(1)
    expect(ending()[0]!.payload.result).toMatchObject({
      notification_type: 'final',
      media_buy_deliveries: [{ media_buy_id: created.media_buy_id, status: 'completed' }],
    })
  })
})
