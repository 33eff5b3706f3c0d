/**
 * The event seam, observed through the recording implementation on a running agent (real SQLite file,
 * injected clock): capabilities.changed once per new snapshot across restarts; the clock's tick moving a buy
 * pending_start → active → completed (cause seller) and closing it; a buyer's cancel; a rejected creative's
 * status change and the impairment it raises. These are the calls the webhook emission hangs off.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tickBuys, recordingEvents, type SellerEvent } from '@adwire/seller'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  KIT_SANDBOX,
  buyRequest,
  displayCreative,
  mcpOk,
  newKey,
  startTestAgent,
  tempDir,
  type Body,
} from '../test-support.js'

const DAY = 86_400
const START = Date.parse('2032-05-01T00:00:00Z') / 1000
let offset = 0
const now = () => START + offset
const database = `sqlite:${join(tempDir(), 'events.sqlite')}`
let agent: RunningSalesAgent
const recorded = (running: RunningSalesAgent): SellerEvent[] =>
  (running.runtime.deps.events as unknown as { recorded: SellerEvent[] }).recorded
const account = { ...ACCOUNT, sandbox: true }

beforeAll(async () => {
  agent = await startTestAgent(
    { DATABASE_URL: database, PUBLIC_URL: 'https://sales.events.test' },
    { now, tickSeconds: 0, events: () => recordingEvents(() => {}) },
  )
})
afterAll(() => agent.close())

const of = (kind: string) => recorded(agent).filter((event) => event.kind === kind)

describe('the SellerEvents seam', () => {
  it('announces capabilities once per snapshot, not again after a restart on the same database (same PUBLIC_URL: same snapshot)', async () => {
    expect(of('capabilitiesChanged')).toEqual([
      {
        kind: 'capabilitiesChanged',
        summary: { capabilities_version: agent.runtime.deps.capabilitiesVersion },
      },
    ])
    const again = await startTestAgent(
      { DATABASE_URL: database, PUBLIC_URL: 'https://sales.events.test' },
      { now, tickSeconds: 0, events: () => recordingEvents(() => {}) },
    )
    try {
      expect(recorded(again).filter((event) => event.kind === 'capabilitiesChanged')).toEqual([])
    } finally {
      await again.close()
    }
  })

  it('sees the clock start and end a buy, and a cancel close one', async () => {
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'sync_creatives',
      { idempotency_key: newKey(), account, creatives: [displayCreative('ev_creative')] },
      'creative/sync-creatives-response.json',
    )
    const created = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest(
        { account, start_time: '2032-05-02T00:00:00Z', end_time: '2032-05-05T00:00:00Z' },
        { creative_assignments: [{ creative_id: 'ev_creative' }] },
      ),
      'media-buy/create-media-buy-response.json',
    )
    expect(created.media_buy_status).toBe('pending_start')
    const id = created.media_buy_id
    const forBuy = () => recorded(agent).filter((event) => event.summary.media_buy_id === id)
    offset = 2 * DAY
    await tickBuys(agent.runtime.deps.seller)
    offset = 5 * DAY
    await tickBuys(agent.runtime.deps.seller)
    expect(
      forBuy().map((event: Body) => [event.kind, event.summary.from, event.summary.to, event.summary.cause]),
    ).toEqual([
      ['buyStatusChanged', undefined, 'pending_start', 'buyer'],
      ['buyStatusChanged', 'pending_start', 'active', 'seller'],
      ['buyStatusChanged', 'active', 'completed', 'seller'],
      ['buyClosed', undefined, undefined, undefined],
    ])

    offset = 6 * DAY
    const other = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({ account }),
      'media-buy/create-media-buy-response.json',
    )
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'update_media_buy',
      { idempotency_key: newKey(), account, media_buy_id: other.media_buy_id, canceled: true },
      'media-buy/update-media-buy-response.json',
    )
    const closed = recorded(agent).filter((event) => event.summary.media_buy_id === other.media_buy_id)
    expect(closed.slice(-2).map((event) => event.kind)).toEqual(['buyStatusChanged', 'buyClosed'])
    expect(closed.at(-2)!.summary).toMatchObject({ to: 'canceled', cause: 'buyer' })
  })

  it('sees a creative rejected and the impairment it raises on the buy using it', async () => {
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'sync_creatives',
      { idempotency_key: newKey(), account, creatives: [displayCreative('ev_risky')] },
      'creative/sync-creatives-response.json',
    )
    const buy = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({ account }, { creative_assignments: [{ creative_id: 'ev_risky' }] }),
      'media-buy/create-media-buy-response.json',
    )
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'comply_test_controller',
      {
        scenario: 'force_creative_status',
        params: { creative_id: 'ev_risky', status: 'rejected' },
        account: { sandbox: true },
      },
      'compliance/comply-test-controller-response.json',
    )
    expect(of('creativeStatusChanged').at(-1)!.summary).toEqual({
      creative_id: 'ev_risky',
      from: 'approved',
      to: 'rejected',
    })
    expect(of('impairmentRaised').at(-1)!.summary).toEqual({
      media_buy_id: buy.media_buy_id,
      resource: 'creative:ev_risky',
    })
  })
})
