/**
 * The real SellerEvents end to end: each event kind is delivered by the sales agent's outbox to a buyer's
 * receiver on 127.0.0.1 (createWebhookReceiver; RFC 9421 keys from the agent's own JWKS, or the legacy HMAC
 * secret), published exactly once, and valid against its official 3.1.19 schema; get_media_buys'
 * webhook_activity rows come from the same fires.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON payloads freely */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ACCOUNT_KIND,
  type CreativeRecord,
  type MediaBuyRecord,
  AGENT_CONFIGS_KIND,
  announceCapabilities,
  type WebhookEvents,
} from '@adwire/seller'
import type { RunningSalesAgent } from '../service.js'
import { expectOfficial, startTestAgent } from '../test-support.js'
import { LEGACY_SECRET, startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'

let offset = 0
const now = () => Date.now() / 1000 + offset
let agent: RunningSalesAgent
let buyer: BuyerReceiver
let events: WebhookEvents
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

beforeAll(async () => {
  agent = await startTestAgent(
    {},
    {
      now,
      reportPeriodSeconds: 3600,
      reportTickMs: 3_600_000,
    },
  )
  buyer = await startBuyerReceiver(agent.url, now)
  events = agent.runtime.deps.events as WebhookEvents
  await agent.runtime.deps.storage.records.put(ACCOUNT_KIND, 'acc_1', 'buyer-1', {
    account_id: 'acc_1',
    owner: 'buyer-1',
    brand: { domain: 'acme.example' },
    status: 'active',
    sandbox: true,
    governance_agents: [],
    created_at: iso(now()),
    updated_at: iso(now()),
    notification_configs: [
      {
        subscriber_id: 'buyer-primary',
        url: `${buyer.origin}/hooks/creative-status-changed/acc_1`,
        event_types: ['creative.status_changed'],
      },
      {
        subscriber_id: 'purges',
        url: `${buyer.origin}/hooks/creative-purged/acc_1`,
        event_types: ['creative.purged'],
      },
      {
        subscriber_id: 'paused',
        url: `${buyer.origin}/hooks/creative-status-changed/paused`,
        event_types: ['creative.status_changed', 'creative.purged'],
        active: false,
      },
    ],
  })
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

/** A stored buy with its registrations at the buyer's receiver. */
async function storedBuy(id: string, reporting: Record<string, unknown> = {}): Promise<MediaBuyRecord> {
  const at = iso(now())
  const buy = {
    media_buy_id: id,
    owner: 'buyer-1',
    account: { account_id: 'acc_1' },
    account_id: 'acc_1',
    sandbox: true,
    status: 'active',
    currency: 'USD',
    start_time: iso(now() - 60),
    end_time: iso(now() + 10 * 86_400),
    created_at: at,
    updated_at: at,
    confirmed_at: at,
    total_budget: 10_000,
    packages: [
      {
        package_id: `${id}_p1`,
        product_id: 'p',
        pricing_option_id: 'cpm',
        budget: 6000,
        paused: false,
        canceled: false,
        creative_assignments: [],
      },
      {
        package_id: `${id}_p2`,
        product_id: 'p',
        pricing_option_id: 'cpm',
        budget: 4000,
        paused: false,
        canceled: false,
        creative_assignments: [],
      },
    ],
    context: { correlation_id: `ctx-${id}` },
    push_notification_config: { url: `${buyer.origin}/hooks/mcp/${id}`, operation_id: `op_${id}` },
    reporting_webhook: {
      url: `${buyer.origin}/hooks/mcp/${id}-reports`,
      reporting_frequency: 'hourly',
      ...reporting,
    },
    impairments: [],
    history: [],
    serving: [[now() - 60, null]],
    buyer_paused: false,
  } as MediaBuyRecord
  await agent.runtime.deps.storage.records.put('media_buy', id, 'buyer-1', buy)
  await events.buyStatusChanged({ buy, from: undefined, to: 'active', cause: 'buyer' })
  return buy
}

const of = (registration: string) => buyer.published.filter((event) => event.registrationId === registration)
const impairment = (id: string, resource: string, reason = 'content_rejected') => ({
  impairment_id: id,
  resource_type: 'creative',
  resource_id: resource,
  package_ids: ['p1'],
  transition: { from: 'approved', to: 'rejected' },
  reason_code: reason,
  observed_at: iso(now()),
})

function expectEnvelope(event: { payload: Record<string, unknown> }, buyId: string) {
  expectOfficial('core/mcp-webhook-payload.json', event.payload)
  expect(event.payload.operation_id).toBe(`op_${buyId}`)
  expect(event.payload.context).toEqual({ correlation_id: `ctx-${buyId}` })
}

describe('SellerEvents through the outbox', () => {
  it('scheduled reports on the cadence: sequence numbers, next_expected_at, windows; RFC 9421 verified', async () => {
    await storedBuy('mb_sched')
    expect(await events.tick()).toBe(0)
    offset += 3601
    expect(await events.tick()).toBe(1)
    expect(await events.tick()).toBe(0)
    await buyer.waitFor(() => of('hooks-mcp-mb_sched-reports').length === 1)
    offset += 3601
    expect(await events.tick()).toBe(1)
    await buyer.waitFor(() => of('hooks-mcp-mb_sched-reports').length === 2)
    const [first, second] = of('hooks-mcp-mb_sched-reports').map((event) => event)
    for (const event of [first!, second!]) {
      expectEnvelope(event, 'mb_sched')
      expect(event.payload.task_type).toBe('media_buy_delivery')
      expectOfficial('media-buy/media-buy-delivery-webhook-result.json', event.payload.result)
      expect(event.sender).toBe(agent.url)
    }
    const results = [first!, second!].map((event) => event.payload.result as any)
    expect(results.map((result) => [result.notification_type, result.sequence_number])).toEqual([
      ['scheduled', 1],
      ['scheduled', 2],
    ])
    expect(results[1].reporting_period.start).toBe(results[0].reporting_period.end)
    expect(Date.parse(results[0].next_expected_at)).toBe(
      Date.parse(results[0].reporting_period.end) + 3600_000,
    )
    expect(Date.parse(results[1].reporting_period.end)).toBeGreaterThanOrEqual(
      Date.parse(results[0].next_expected_at),
    )
    expect(results[0].media_buy_deliveries[0].totals.spend).toBeGreaterThan(0)
    expect(results[0]).not.toHaveProperty('aggregated_totals')
    const signature = buyer.deliveries.find((delivery) => delivery.path.endsWith('mb_sched-reports'))!.headers
    expect(signature['signature-input']).toContain('tag="adcp/webhook-signing/v1"')
  })

  it('impairments coalesce (general) or go at once (latency-sensitive); final goes after them, then nothing', async () => {
    const buy = await storedBuy('mb_close')
    await events.impairmentRaised({
      buy,
      impairment: impairment('imp_1', 'cr_1'),
      resourceKey: 'creative:cr_1',
    })
    await events.impairmentRaised({
      buy,
      impairment: impairment('imp_1', 'cr_1'),
      resourceKey: 'creative:cr_1',
    })
    await events.impairmentRaised({
      buy,
      impairment: impairment('imp_2', 'cr_2', 'policy_violation'),
      resourceKey: 'creative:cr_2',
    })
    await buyer.waitFor(() => of('hooks-mcp-mb_close').length === 1)
    expect((of('hooks-mcp-mb_close')[0]!.payload.result as any).impairment.impairment_id).toBe('imp_2')
    // The general impairment waits in its 5-minute window; the buy's end makes it due before the final report.
    buy.status = 'completed'
    await events.buyClosed(buy)
    await buyer.waitFor(
      () => of('hooks-mcp-mb_close-reports').length === 1 && of('hooks-mcp-mb_close').length === 2,
    )
    const impaired = of('hooks-mcp-mb_close')[1]!
    expectEnvelope(impaired, 'mb_close')
    expect(impaired.notificationId).toBe('imp_1')
    expectOfficial('core/impairment.json', (impaired.payload.result as any).impairment)
    const final = of('hooks-mcp-mb_close-reports')[0]!
    expectEnvelope(final, 'mb_close')
    expectOfficial('media-buy/media-buy-delivery-webhook-result.json', final.payload.result)
    expect(final.payload.result).toMatchObject({ notification_type: 'final', sequence_number: 1 })
    expect(final.payload.result).not.toHaveProperty('next_expected_at')
    const order = buyer.published.map((event) => event.idempotencyKey)
    expect(order.indexOf(impaired.idempotencyKey)).toBeLessThan(order.indexOf(final.idempotencyKey))
    // Nothing more for a closed buy.
    offset += 7200
    await events.deliveryAdvanced(buy)
    await events.impairmentRaised({
      buy,
      impairment: impairment('imp_3', 'cr_3', 'policy_violation'),
      resourceKey: 'creative:cr_3',
    })
    await events.buyClosed(buy)
    await events.tick()
    await agent.runtime.deps.sender.drain()
    expect(of('hooks-mcp-mb_close')).toHaveLength(2)
    expect(of('hooks-mcp-mb_close-reports')).toHaveLength(1)
  })

  it('off-cadence reports: delayed, adjusted, window_update take the next sequence numbers', async () => {
    const buy = await storedBuy('mb_off')
    const window = { start: now() - 3600, end: now() }
    await events.offCadenceReport(buy, 'delayed', window)
    await events.offCadenceReport(buy, 'adjusted', window)
    await events.offCadenceReport(buy, 'window_update', window)
    await buyer.waitFor(() => of('hooks-mcp-mb_off-reports').length === 3)
    const results = of('hooks-mcp-mb_off-reports').map((event) => event.payload.result as any)
    for (const result of results) expectOfficial('media-buy/media-buy-delivery-webhook-result.json', result)
    expect(results.map((result) => [result.notification_type, result.sequence_number]).sort()).toEqual([
      ['adjusted', 2],
      ['delayed', 1],
      ['window_update', 3],
    ])
    expect(
      results.find((result) => result.notification_type === 'delayed').media_buy_deliveries[0].status,
    ).toBe('reporting_delayed')
  })

  it('creative events go to the subscribed, active notification_configs only, in their official shapes', async () => {
    const creative = {
      creative_id: 'cr_9',
      owner: 'buyer-1',
      account_id: 'acc_1',
      format_id: { agent_url: 'https://creative.example', id: 'display_300x250' },
      status: 'rejected',
      created_at: iso(now()),
      updated_at: iso(now()),
      rejection_reason: 'landing page policy',
    } as CreativeRecord
    await events.creativeStatusChanged(creative, 'approved')
    await events.creativeStatusChanged({ ...creative, status: 'approved' }, 'rejected') // buyer resubmit: no fire
    await events.creativeStatusChanged(creative, undefined) // created rejected by the buyer's sync: no fire
    await events.creativePurged({ ...creative, purged_at: iso(now()) }, 'soft')
    await buyer.waitFor(() => of('hooks-creative-purged-acc_1').length === 1)
    await agent.runtime.deps.sender.drain()
    const [changed] = of('hooks-creative-status-changed-acc_1')
    expect(of('hooks-creative-status-changed-acc_1')).toHaveLength(1)
    expectOfficial('creative/creative-status-changed-webhook.json', changed!.payload)
    expect(changed!.payload).toMatchObject({
      subscriber_id: 'buyer-primary',
      account_id: 'acc_1',
      transition: { from: 'approved', to: 'rejected' },
    })
    const [purged] = of('hooks-creative-purged-acc_1')
    expectOfficial('creative/creative-purged-webhook.json', purged!.payload)
    expect(purged!.payload).toMatchObject({
      subscriber_id: 'purges',
      purge_kind: 'soft',
      creative_id: 'cr_9',
    })
    expect(buyer.deliveries.some((delivery) => delivery.path.includes('/paused'))).toBe(false)
  })

  it('capabilities.changed goes to the agent-level configs that list it, with capabilities_version', async () => {
    await agent.runtime.deps.storage.records.put(AGENT_CONFIGS_KIND, 'buyer-1', 'buyer-1', {
      principal_id: 'buyer-1',
      updated_at: iso(now()),
      notification_configs: [
        {
          subscriber_id: 'caps',
          url: `${buyer.origin}/hooks/capabilities-changed/buyer-1`,
          event_types: ['capabilities.changed'],
        },
        {
          subscriber_id: 'other',
          url: `${buyer.origin}/hooks/capabilities-changed/other`,
          event_types: ['creative.purged'],
        },
      ],
    })
    const records = agent.runtime.deps.storage.records
    // The snapshot the agent serves was recorded at start: announcing it again fires nothing.
    expect(await announceCapabilities(records, events, agent.runtime.deps.capabilitiesVersion)).toBe(false)
    expect(await announceCapabilities(records, events, 'caps-v2')).toBe(true)
    expect(await announceCapabilities(records, events, 'caps-v2')).toBe(false)
    await buyer.waitFor(() => of('hooks-capabilities-changed-buyer-1').length === 1)
    await agent.runtime.deps.sender.drain()
    expect(of('hooks-capabilities-changed-buyer-1')[0]!.payload).toMatchObject({
      notification_type: 'capabilities.changed',
      capabilities_version: 'caps-v2',
      subscriber_id: 'caps',
    })
    expect(of('hooks-capabilities-changed-other')).toHaveLength(0)
  })

  it('503 twice: retried with back-off, same idempotency_key, fresh nonces, published once; webhook_activity shows each attempt', async () => {
    const buy = await storedBuy('mb_retry')
    buyer.failNext('/hooks/mcp/mb_retry-reports', 2)
    offset += 3601
    expect(await events.tick()).toBeGreaterThanOrEqual(1)
    for (let attempt = 0; attempt < 40 && of('hooks-mcp-mb_retry-reports').length === 0; attempt++) {
      offset += 30
      await agent.runtime.deps.sender.drain()
    }
    await buyer.waitFor(() => of('hooks-mcp-mb_retry-reports').length === 1)
    const attempts = buyer.deliveries.filter((delivery) => delivery.path === '/hooks/mcp/mb_retry-reports')
    expect(attempts.map((delivery) => delivery.status)).toEqual([503, 503, 200])
    expect(new Set(attempts.map((delivery) => JSON.parse(delivery.body).idempotency_key)).size).toBe(1)
    expect(new Set(attempts.map((delivery) => delivery.body)).size).toBe(1)
    const nonces = attempts.map(
      (delivery) => /nonce="([^"]+)"/.exec(delivery.headers['signature-input']!)![1],
    )
    expect(new Set(nonces).size).toBe(3)

    const activity = await events.webhookActivity(buy, 'buyer-1')
    for (const row of activity) expectOfficial('core/webhook-activity-record.json', row)
    expect(activity.map((row) => [row.attempt, row.status, row.http_status_code])).toEqual([
      [3, 'success', 200],
      [2, 'failed', 503],
      [1, 'failed', 503],
    ])
    expect(activity[0]).toMatchObject({
      notification_type: 'scheduled',
      sequence_number: 1,
      idempotency_key: JSON.parse(attempts[0]!.body).idempotency_key,
      url: `${buyer.origin}/hooks/mcp/mb_retry-reports`,
      error_message: null,
    })
    // Another principal's copy of the buy sees none of these fires.
    expect(await events.webhookActivity(buy, 'reader-1')).toEqual([])
  })

  it('legacy HMAC-SHA256 when the reporting registration asks for it (no RFC 9421 headers)', async () => {
    const buy = await storedBuy('mb_hmac', {
      url: `${buyer.origin}/hmac/mcp/mb_hmac`,
      authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
    })
    offset += 3601
    await events.deliveryAdvanced(buy)
    await buyer.waitFor(() => of('hmac-mcp-mb_hmac').length === 1)
    const delivery = buyer.deliveries.find((entry) => entry.path === '/hmac/mcp/mb_hmac')!
    expect(delivery.headers['x-adcp-signature']).toMatch(/^sha256=/)
    expect(delivery.headers['signature-input']).toBeUndefined()
    expectOfficial(
      'media-buy/media-buy-delivery-webhook-result.json',
      of('hmac-mcp-mb_hmac')[0]!.payload.result,
    )
  })
})
