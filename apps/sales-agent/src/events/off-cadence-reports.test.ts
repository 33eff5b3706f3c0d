/**
 * The off-cadence delivery reports, each from the situation that causes it, end to end: buys created over MCP
 * with a reporting_webhook (and/or push_notification_config) at a buyer's receiver on 127.0.0.1, the seller's
 * clock moved by the injected `now`, the report scheduler's tick, the test controller.
 * - `delayed`: force_upstream_unavailable on get_media_buy_delivery, a scheduled report due → delayed (no
 *   figures), then once the upstream is back the scheduled report covering the whole open window.
 * - `adjusted`: simulate_delivery after a report → the upstream's late count restates that window.
 * - `window_update`: a linear TV buy (live → C3 → C7) gets each later window's data as its periods mature.
 * Every payload validates against the official schema; sequence numbers run 1..n without gaps,
 * next_expected_at names the next notification, and `final` comes last with nothing after it.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON payloads freely */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  KIT_SANDBOX,
  buyRequest,
  displayCreative,
  expectOfficial,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'
import { LEGACY_SECRET, startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import { FIRE_KIND, type WebhookEvents } from '@adwire/seller'

const HOUR = 3600
let offset = 0
const now = () => Date.now() / 1000 + offset
let agent: RunningSalesAgent
let buyer: BuyerReceiver
let events: WebhookEvents
const account = { ...ACCOUNT, sandbox: true }
const iso = (seconds: number) => new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z')

beforeAll(async () => {
  agent = await startTestAgent(
    {},
    // Hourly reports; a measurement "day" of one hour (C3 after 4 of them, C7 after 8); no background ticks.
    { now, reportPeriodSeconds: HOUR, reportTickMs: 3_600_000, measurementDaySeconds: HOUR, tickSeconds: 0 },
  )
  buyer = await startBuyerReceiver(agent.url, now)
  events = agent.runtime.deps.events as WebhookEvents
  await call(
    'sync_creatives',
    { account, creatives: [displayCreative('spot')] },
    'creative/sync-creatives-response.json',
  )
  await control('seed_product', {
    product_id: 'primetime_30s',
    fixture: {
      delivery_type: 'non_guaranteed',
      channels: ['linear_tv'],
      format_ids: [{ id: 'display_300x250_image' }],
    },
  })
  await control('seed_pricing_option', {
    product_id: 'primetime_30s',
    pricing_option_id: 'cpm_linear',
    fixture: { pricing_model: 'cpm', currency: 'USD', fixed_price: 20 },
  })
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const call = (task: string, args: Body, schema: string) =>
  mcpOk(agent, KIT_SANDBOX, task, { idempotency_key: newKey(), ...args }, schema)
const control = (scenario: string, params: Body) =>
  mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true } },
    'compliance/comply-test-controller-response.json',
  )

/** A buy delivering for two days with these registrations. */
async function createBuy(registrations: Body, product?: Body): Promise<string> {
  const created = await call(
    'create_media_buy',
    buyRequest(
      { account, end_time: iso(now() + 2 * 86_400), ...registrations },
      { creative_assignments: [{ creative_id: 'spot' }], ...product },
    ),
    'media-buy/create-media-buy-response.json',
  )
  expect(created.media_buy_id).toEqual(expect.any(String))
  return created.media_buy_id as string
}
const reporting = (name: string) => ({
  reporting_webhook: {
    url: `${buyer.origin}/hmac/mcp/${name}`,
    reporting_frequency: 'hourly',
    // The official schema requires authentication on a reporting_webhook; the legacy HMAC scheme here.
    authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
  },
})

/**
 * The delivery results at a reporting_webhook (`/hmac/mcp/{name}`; `push`: the RFC 9421 push url
 * `/hooks/mcp/{name}`), in arrival order, each checked against the official schemas.
 */
function results(name: string, push = false): any[] {
  return buyer.published
    .filter((event) => event.registrationId === `${push ? 'hooks' : 'hmac'}-mcp-${name}`)
    .map((event) => {
      expectOfficial('core/mcp-webhook-payload.json', event.payload)
      expect(event.payload.task_type).toBe('media_buy_delivery')
      expectOfficial('media-buy/media-buy-delivery-webhook-result.json', event.payload.result)
      // When it was sent (the envelope's timestamp, on the seller's clock).
      return { ...(event.payload.result as any), sent_at: Date.parse(String(event.payload.timestamp)) / 1000 }
    })
}
const bySequence = (list: any[]) => [...list].sort((a, b) => a.sequence_number - b.sequence_number)

/**
 * Waits until the receiver published every report the seller noted firing to a registration (a delivery that
 * failed on a busy machine is retried after its back-off: the clock moves on for it).
 */
async function complete(name: string, push = false) {
  const url = `${buyer.origin}/${push ? 'hooks' : 'hmac'}/mcp/${name}`
  const fired = async () =>
    (await agent.runtime.deps.storage.records.list<{ url: string }>(FIRE_KIND)).filter(
      (fire) => fire.body.url === url,
    ).length
  const count = await fired()
  for (let attempt = 0; attempt < 100 && results(name, push).length < count; attempt++) {
    await agent.runtime.deps.sender.drain()
    await new Promise((resolve) => setTimeout(resolve, 50))
    if (attempt % 10 === 9) offset += 30
  }
  expect(results(name, push)).toHaveLength(count)
  const numbers = results(name, push).map((result) => result.sequence_number as number)
  expect(numbers.length).toBe(Math.max(0, ...numbers))
}

/** Moves the clock and runs the scheduler's tick. */
async function advance(seconds: number): Promise<number> {
  offset += seconds
  return events.tick()
}

async function cancel(id: string) {
  await call(
    'update_media_buy',
    { account, media_buy_id: id, canceled: true },
    'media-buy/update-media-buy-response.json',
  )
}

/** The final report is the last of the stream, and nothing follows it. */
async function expectFinalLast(name: string, count: number) {
  await buyer.waitFor(() => results(name).length === count)
  await complete(name)
  await advance(2 * HOUR)
  await agent.runtime.deps.sender.drain()
  const list = results(name)
  expect(list).toHaveLength(count)
  expect(list.at(-1)).toMatchObject({ notification_type: 'final', sequence_number: count })
  expect(list.at(-1)).not.toHaveProperty('next_expected_at')
  expect(bySequence(list).map((result) => result.sequence_number)).toEqual(
    Array.from({ length: count }, (_, index) => index + 1),
  )
}

describe('off-cadence delivery reports', () => {
  it('delayed while the reporting upstream is down, then the scheduled report for the whole window', async () => {
    const id = await createBuy(reporting('delayed'))
    expect(await advance(HOUR + 1)).toBe(1)
    await buyer.waitFor(() => results('delayed').length === 1)
    const [first] = results('delayed')
    const before = now()
    const forced = await control('force_upstream_unavailable', {
      tool: 'get_media_buy_delivery',
      upstream_name: 'ad-server-reporting',
      duration_seconds: 1.5 * HOUR,
    })
    expect(forced.success).toBe(true)
    const after = now()

    expect(await advance(HOUR + 1)).toBe(1)
    await buyer.waitFor(() => results('delayed').length === 2)
    const delayed = results('delayed')[1]
    expect(delayed).toMatchObject({
      notification_type: 'delayed',
      sequence_number: 2,
      partial_data: true,
      unavailable_count: 1,
      reporting_period: { start: first.reporting_period.end },
      media_buy_deliveries: [
        { media_buy_id: id, status: 'reporting_delayed', totals: { spend: 0 }, by_package: [] },
      ],
    })
    // When the data is expected is when the next notification comes: the upstream's return, 1.5 h after the
    // agent read its clock during the control call (between before and after), in whole seconds.
    const expected = Date.parse(delayed.next_expected_at) / 1000
    expect(expected).toBeGreaterThanOrEqual(Math.floor(before) + 1.5 * HOUR)
    expect(expected).toBeLessThanOrEqual(after + 1.5 * HOUR)
    expect(delayed.media_buy_deliveries[0].expected_availability).toBe(delayed.next_expected_at)
    expect(delayed.errors[0]).toMatchObject({ code: 'SERVICE_UNAVAILABLE', recovery: 'transient' })
    // Nothing more before the upstream is back.
    expect(await advance(0.25 * HOUR)).toBe(0)

    expect(await advance(0.25 * HOUR + 2)).toBe(1)
    await buyer.waitFor(() => results('delayed').length === 3)
    const caughtUp = results('delayed')[2]
    expect(caughtUp).toMatchObject({
      notification_type: 'scheduled',
      sequence_number: 3,
      reporting_period: { start: first.reporting_period.end },
    })
    // The window left open by the delay is reported in full: about 1.5 hours of delivery.
    expect(caughtUp.media_buy_deliveries[0].totals.impressions).toBeGreaterThan(
      first.media_buy_deliveries[0].totals.impressions,
    )
    expect(Date.parse(caughtUp.next_expected_at)).toBe(
      Date.parse(caughtUp.reporting_period.end) + HOUR * 1000,
    )
    await cancel(id)
    await expectFinalLast('delayed', 4)
  })

  it('adjusted when simulate_delivery restates the reported window; the next window does not count it twice', async () => {
    const id = await createBuy(reporting('adjusted'))
    await advance(HOUR + 1)
    await buyer.waitFor(() => results('adjusted').length === 1)
    const [first] = results('adjusted')
    await control('simulate_delivery', {
      media_buy_id: id,
      impressions: 5000,
      clicks: 40,
      reported_spend: { amount: 100, currency: 'USD' },
    })
    await buyer.waitFor(() => results('adjusted').length === 2)
    const adjusted = results('adjusted')[1]
    const before = first.media_buy_deliveries[0].totals
    expect(adjusted).toMatchObject({
      notification_type: 'adjusted',
      sequence_number: 2,
      reporting_period: first.reporting_period,
      next_expected_at: first.next_expected_at,
      media_buy_deliveries: [
        {
          media_buy_id: id,
          is_adjusted: true,
          totals: { impressions: before.impressions + 5000, clicks: before.clicks + 40 },
        },
      ],
    })
    expect(adjusted.media_buy_deliveries[0].totals.spend).toBeCloseTo(before.spend + 100, 2)

    await advance(HOUR + 1)
    await buyer.waitFor(() => results('adjusted').length === 3)
    const next = results('adjusted')[2]
    expect(next).toMatchObject({
      notification_type: 'scheduled',
      sequence_number: 3,
      reporting_period: { start: first.reporting_period.end },
    })
    const hourly = next.media_buy_deliveries[0].totals.impressions
    expect(Math.abs(hourly - before.impressions)).toBeLessThan(before.impressions * 0.5)
    // The pull agrees: the simulated delivery is in the buy's totals once.
    const pulled = await call(
      'get_media_buy_delivery',
      { account, media_buy_ids: [id] },
      'media-buy/get-media-buy-delivery-response.json',
    )
    // (a moment later on the real clock: a few more impressions)
    const total = pulled.media_buy_deliveries[0].totals.impressions
    expect(total).toBeGreaterThanOrEqual(before.impressions + 5000 + hourly)
    expect(total).toBeLessThan(before.impressions + 5000 + hourly + 200)
    await cancel(id)
    await expectFinalLast('adjusted', 4)
    expect(results('adjusted')[3].media_buy_deliveries[0].totals.impressions).toBeGreaterThanOrEqual(
      before.impressions + 5000 + hourly,
    )
  })

  it("window_update as a linear TV buy's C3 and C7 mature, among the scheduled reports and to a push-only buy", async () => {
    const linear = { product_id: 'primetime_30s', pricing_option_id: 'cpm_linear', bid_price: undefined }
    const started = now()
    const id = await createBuy(reporting('linear'), linear)
    const pushOnly = await createBuy(
      {
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/linear-push`, operation_id: 'op-linear' },
      },
      linear,
    )
    for (let hour = 0; hour < 10; hour++) await advance(HOUR)
    await complete('linear')
    await complete('linear-push', true)
    // In sequence order: two reports queued on one tick may arrive in either order.
    const list = bySequence(results('linear'))
    const updates = list.filter((result) => result.notification_type === 'window_update')
    const scheduled = list.filter((result) => result.notification_type === 'scheduled')
    expect(scheduled.length).toBeGreaterThanOrEqual(9)
    for (const result of scheduled)
      for (const pkg of result.media_buy_deliveries[0].by_package)
        expect(pkg).toMatchObject({ measurement_window: 'live', is_final: false })
    const stage = (window: string) =>
      updates.filter((result) => result.media_buy_deliveries[0].by_package[0].measurement_window === window)
    const c3 = stage('c3')
    const c7 = stage('c7')
    expect(c3.length).toBeGreaterThanOrEqual(1)
    expect(c7.length).toBeGreaterThanOrEqual(1)
    for (const result of c3)
      expect(result.media_buy_deliveries[0].by_package[0]).toMatchObject({
        supersedes_window: 'live',
        is_final: false,
      })
    for (const result of c7) {
      expect(result.media_buy_deliveries[0]).toMatchObject({
        is_final: true,
        finalized_at: expect.any(String),
      })
      expect(result.media_buy_deliveries[0].by_package[0]).toMatchObject({ supersedes_window: 'c3' })
    }
    // Periods are measurement days (here hours) from the first the buy served in; each matures once per window.
    const periodStart = Math.floor(started / HOUR) * HOUR
    expect(Date.parse(c3[0].reporting_period.start) / 1000).toBe(periodStart)
    expect(Date.parse(c7[0].reporting_period.start) / 1000).toBe(periodStart)
    for (const series of [c3, c7])
      for (let index = 1; index < series.length; index++)
        expect(series[index].reporting_period.start).toBe(series[index - 1].reporting_period.end)
    // A period's C3 arrives 4 measurement days after it ends, C7 8 days: the last sent ends in time.
    const end = (result: any) => Date.parse(result.reporting_period.end) / 1000
    expect(end(c3.at(-1)) + 4 * HOUR).toBeLessThanOrEqual(now())
    expect(end(c7.at(-1)) + 8 * HOUR).toBeLessThanOrEqual(now())
    expect(end(c7.at(-1)) + 9 * HOUR).toBeGreaterThan(now())
    // C7 counts more viewers than C3 for the same period.
    const sameStart = c3.find((result) => result.reporting_period.start === c7[0].reporting_period.start)
    if (sameStart && sameStart.reporting_period.end === c7[0].reporting_period.end)
      expect(c7[0].media_buy_deliveries[0].totals.impressions).toBeGreaterThan(
        sameStart.media_buy_deliveries[0].totals.impressions,
      )
    // Each notification names the next one: the earlier of the next scheduled report and the next maturity;
    // nothing comes before the time it named.
    const ordered = bySequence(list)
    for (let index = 0; index + 1 < ordered.length; index++) {
      const expected = Date.parse(ordered[index].next_expected_at) / 1000
      // next_expected_at is set when the report is built, sent_at when it leaves: on a loaded machine the
      // delivery can trail the build by a second or two (a CI run saw 1 s).
      expect(expected).toBeGreaterThanOrEqual(Math.floor(ordered[index].sent_at) - 3)
      expect(expected).toBeLessThanOrEqual(ordered[index].sent_at + HOUR + 1)
      expect(ordered[index + 1].sent_at).toBeGreaterThanOrEqual(expected - 1)
    }

    // Without a reporting_webhook, the window updates go to the push_notification_config, nothing scheduled.
    const pushed = results('linear-push', true)
    expect(pushed.length).toBeGreaterThanOrEqual(2)
    expect(new Set(pushed.map((result) => result.notification_type))).toEqual(new Set(['window_update']))
    expect(
      buyer.published.find((event) => event.registrationId === 'hooks-mcp-linear-push')!.operationId,
    ).toBe('op-linear')

    await cancel(id)
    await cancel(pushOnly)
    await expectFinalLast('linear', list.length + 1)
    expect(results('linear-push', true)).toHaveLength(pushed.length)
  })
})
