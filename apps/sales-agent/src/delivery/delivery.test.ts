/**
 * get_media_buy_delivery on the seller's clock (an injected clock moved by the test), through the official MCP
 * client: delivery paces with the flight (a quarter of the flight spends about a quarter of the budget), stops
 * while paused, is the same when read twice, totals equal the daily rows, the buy completes at its flight end
 * having spent its budget and no more; only declared granularities are honoured. Official schemas throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  buyRequest,
  displayCreative,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

const DELIVERY = 'media-buy/get-media-buy-delivery-response.json'
const DAY = 86_400
const START = Date.parse('2031-03-01T00:00:00Z') / 1000
let offset = 0
const now = () => START + offset
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent({}, { now })
  await mcpOk(
    agent,
    BUYER_TOKEN,
    'sync_creatives',
    { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('dlv_creative')] },
    'creative/sync-creatives-response.json',
  )
})
afterAll(() => agent.close())

const delivery = (args: Body) => mcpOk(agent, BUYER_TOKEN, 'get_media_buy_delivery', args, DELIVERY)

describe('simulated delivery', () => {
  it('paces over the flight, pauses, repeats itself and completes at the flight end', async () => {
    offset = 0
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        { end_time: '2031-03-09T00:00:00Z' },
        { budget: 8000, creative_assignments: [{ creative_id: 'dlv_creative' }] },
      ),
      'media-buy/create-media-buy-response.json',
    )
    expect(created.media_buy_status).toBe('active')
    const id = created.media_buy_id

    offset = 2 * DAY
    const quarter = await delivery({
      media_buy_ids: [id],
      include_package_daily_breakdown: true,
      context: { c: 1 },
    })
    expect(quarter.context).toEqual({ c: 1 })
    const buy = quarter.media_buy_deliveries[0]
    expect(buy.status).toBe('active')
    expect(buy.totals.spend).toBeGreaterThan(8000 * 0.25 * 0.8)
    expect(buy.totals.spend).toBeLessThan(8000 * 0.25 * 1.2)
    expect(buy.totals.impressions).toBeGreaterThan(0)
    expect(buy.totals.clicks).toBeGreaterThan(0)
    expect(buy.totals.cost_per_click).toBeCloseTo(buy.totals.spend / buy.totals.clicks, 1)
    expect(buy.totals.viewability).toMatchObject({ standard: 'mrc', viewed_seconds: expect.any(Number) })
    expect(buy.totals.viewability.viewable_impressions).toBeLessThanOrEqual(
      buy.totals.viewability.measurable_impressions,
    )
    expect(buy.daily_breakdown.map((day: Body) => day.date)).toEqual(['2031-03-01', '2031-03-02'])
    const dailyImpressions = buy.daily_breakdown.reduce((sum: number, day: Body) => sum + day.impressions, 0)
    expect(dailyImpressions).toBe(buy.totals.impressions)
    expect(buy.by_package[0].daily_breakdown).toHaveLength(2)
    expect(buy.by_package[0].pacing_index).toBeGreaterThan(0.8)
    expect(quarter.aggregated_totals).toMatchObject({
      media_buy_count: 1,
      impressions: buy.totals.impressions,
    })
    expect(
      await delivery({ media_buy_ids: [id], include_package_daily_breakdown: true, context: { c: 1 } }),
    ).toEqual(quarter)

    await mcpOk(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: id, paused: true },
      'media-buy/update-media-buy-response.json',
    )
    offset = 3 * DAY
    const paused = (await delivery({ media_buy_ids: [id] })).media_buy_deliveries[0]
    expect(paused.status).toBe('paused')
    expect(paused.totals.impressions).toBe(buy.totals.impressions)
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: id, paused: false },
      'media-buy/update-media-buy-response.json',
    )

    offset = 10 * DAY
    const done = (
      await delivery({ media_buy_ids: [id], time_granularity: 'daily', include_window_breakdown: true })
    ).media_buy_deliveries[0]
    expect(done.status).toBe('completed')
    expect(done.totals.spend).toBeLessThanOrEqual(8000)
    expect(done.totals.spend).toBeGreaterThan(8000 * (7 / 8) * 0.8)
    expect(done.daily_breakdown.map((day: Body) => day.date)).not.toContain('2031-03-03')
    expect(done.windows[0]).toMatchObject({
      window_start: '2031-03-01T00:00:00Z',
      window_end: '2031-03-02T00:00:00Z',
    })
    const read = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0].status).toBe('completed')
  })

  it('honours only the declared granularities and reports unknown buys', async () => {
    const error = await mcpFails(
      agent,
      BUYER_TOKEN,
      'get_media_buy_delivery',
      { time_granularity: 'hourly' },
      'UNSUPPORTED_GRANULARITY',
    )
    expect(error.field).toBe('time_granularity')
    await mcpFails(
      agent,
      BUYER_TOKEN,
      'get_media_buy_delivery',
      { media_buy_ids: ['mb_none'] },
      'MEDIA_BUY_NOT_FOUND',
    )
  })
})
