/**
 * The media buy lifecycle through the official MCP client on a running agent (real SQLite file): the
 * state-machine storyboard's path (active → paused → active → canceled, then INVALID_STATE and NOT_CANCELLABLE),
 * pending_creatives advancing once a creative is synced and assigned, every validation code, permissions,
 * idempotent replay, and get_media_buys (context of the create request, pagination). Every answer validates
 * against the official 3.1.19 schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  READER_TOKEN,
  buyRequest,
  displayCreative,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

const CREATE = 'media-buy/create-media-buy-response.json'
const UPDATE = 'media-buy/update-media-buy-response.json'
const GET = 'media-buy/get-media-buys-response.json'
const SYNC = 'creative/sync-creatives-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const update = (args: Body) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'update_media_buy',
    { idempotency_key: newKey(), account: ACCOUNT, ...args },
    UPDATE,
  )
const updateFails = (args: Body, code: string) =>
  mcpFails(
    agent,
    BUYER_TOKEN,
    'update_media_buy',
    { idempotency_key: newKey(), account: ACCOUNT, ...args },
    code,
  )
const sync = (creatives: Body[], extra: Body = {}) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'sync_creatives',
    { idempotency_key: newKey(), account: ACCOUNT, creatives, ...extra },
    SYNC,
  )
const getBuy = async (id: string) =>
  (await mcpOk(agent, BUYER_TOKEN, 'get_media_buys', { media_buy_ids: [id] }, GET)).media_buys[0]

describe('the state machine', () => {
  it('runs active → paused → active → canceled and then refuses with INVALID_STATE and NOT_CANCELLABLE', async () => {
    const synced = await sync([displayCreative('sm_creative')])
    expect(synced.creatives[0]).toMatchObject({
      creative_id: 'sm_creative',
      action: 'created',
      status: 'approved',
    })
    const context = { correlation_id: 'sm-create' }
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        { context },
        { creative_assignments: [{ creative_id: 'sm_creative' }], context: { line: 'l-1' } },
      ),
      CREATE,
    )
    expect(created).toMatchObject({
      media_buy_status: 'active',
      status: 'completed',
      revision: 1,
      currency: 'USD',
    })
    expect(created.context).toEqual(context)
    expect(created.packages[0].package_id).toMatch(/^pkg_/)
    expect(created.packages[0].context).toEqual({ line: 'l-1' })
    expect(created.confirmed_at).toEqual(expect.any(String))
    const id = created.media_buy_id

    expect((await update({ media_buy_id: id, paused: true })).media_buy_status).toBe('paused')
    const resumed = await update({ media_buy_id: id, paused: false, context: { correlation_id: 'resume' } })
    expect(resumed.media_buy_status).toBe('active')
    expect(resumed.context).toEqual({ correlation_id: 'resume' })
    const canceled = await update({ media_buy_id: id, canceled: true, cancellation_reason: 'plan changed' })
    expect(canceled.media_buy_status).toBe('canceled')
    expect(canceled.valid_actions).toEqual([])

    await updateFails({ media_buy_id: id, paused: true }, 'INVALID_STATE')
    await updateFails({ media_buy_id: id, paused: false }, 'INVALID_STATE')
    await updateFails({ media_buy_id: id, canceled: true }, 'NOT_CANCELLABLE')

    const read = await getBuy(id)
    expect(read.status).toBe('canceled')
    expect(read.cancellation).toMatchObject({ canceled_by: 'buyer', reason: 'plan changed' })
    expect(read.context).toEqual(context)
    expect(read.health).toBe('ok')
  })

  it('answers MEDIA_BUY_NOT_FOUND and PACKAGE_NOT_FOUND', async () => {
    await updateFails({ media_buy_id: 'mb_missing', paused: true }, 'MEDIA_BUY_NOT_FOUND')
    const created = await mcpOk(agent, BUYER_TOKEN, 'create_media_buy', buyRequest(), CREATE)
    await updateFails(
      { media_buy_id: created.media_buy_id, packages: [{ package_id: 'pkg_missing', budget: 100 }] },
      'PACKAGE_NOT_FOUND',
    )
  })
})

describe('pending_creatives', () => {
  it('starts pending_creatives without creatives and advances once an approved creative is assigned', async () => {
    const created = await mcpOk(agent, BUYER_TOKEN, 'create_media_buy', buyRequest(), CREATE)
    expect(created.media_buy_status).toBe('pending_creatives')
    expect(created.valid_actions).toContain('sync_creatives')
    const packageId = created.packages[0].package_id
    const synced = await sync([displayCreative('late_creative')], {
      assignments: [{ creative_id: 'late_creative', package_id: packageId }],
    })
    expect(synced.creatives[0].assigned_to).toEqual([packageId])
    const read = await getBuy(created.media_buy_id)
    expect(read.status).toBe('active')
    expect(read.packages[0].creative_assignments).toEqual([{ creative_id: 'late_creative' }])
  })

  it('advances through update_media_buy creative assignments too', async () => {
    await sync([displayCreative('assigned_by_update')])
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({ start_time: '2098-01-01T00:00:00Z' }),
      CREATE,
    )
    expect(created.media_buy_status).toBe('pending_creatives')
    const updated = await update({
      media_buy_id: created.media_buy_id,
      packages: [
        {
          package_id: created.packages[0].package_id,
          creative_assignments: [{ creative_id: 'assigned_by_update' }],
        },
      ],
    })
    expect(updated.media_buy_status).toBe('pending_start')
    expect(updated.affected_packages[0].package_id).toBe(created.packages[0].package_id)
  })
})

describe('validation', () => {
  const fails = (args: Body, code: string) => mcpFails(agent, BUYER_TOKEN, 'create_media_buy', args, code)

  it('refuses reversed and ended flights with VALIDATION_ERROR, a past start with INVALID_REQUEST', async () => {
    const reversed = await fails(
      buyRequest({ start_time: '2099-12-31T00:00:00Z', end_time: '2099-01-01T00:00:00Z' }),
      'VALIDATION_ERROR',
    )
    expect(reversed.field).toBe('end_time')
    expect((await fails(buyRequest({ end_time: '2020-01-01T00:00:00Z' }), 'VALIDATION_ERROR')).field).toBe(
      'end_time',
    )
    expect((await fails(buyRequest({ start_time: '2021-01-01T00:00:00Z' }), 'INVALID_REQUEST')).field).toBe(
      'start_time',
    )
  })

  it('checks products, pricing options, budgets and measurement terms', async () => {
    expect((await fails(buyRequest({}, { product_id: 'no_such_product' }), 'PRODUCT_NOT_FOUND')).field).toBe(
      'packages[0].product_id',
    )
    expect((await fails(buyRequest({}, { pricing_option_id: 'nope' }), 'INVALID_REQUEST')).field).toBe(
      'packages[0].pricing_option_id',
    )
    await fails(
      buyRequest({}, { product_id: 'lumen_ctv_primetime', pricing_option_id: 'cpm_ctv', budget: 500 }),
      'BUDGET_TOO_LOW',
    )
    await fails(buyRequest({}, { bid_price: 1 }), 'VALIDATION_ERROR')
    await fails(
      buyRequest(
        {},
        {
          measurement_terms: {
            billing_measurement: { vendor: { domain: 'v.example' }, max_variance_percent: 0 },
          },
        },
      ),
      'TERMS_REJECTED',
    )
  })

  it('refuses a request the official schema refuses, before anything runs', async () => {
    const error = await fails(buyRequest({ end_time: undefined }), 'INVALID_REQUEST')
    expect(error.field).toBe('end_time')
  })
})

describe('access and idempotency', () => {
  it('needs credentials and media_buys:write', async () => {
    await mcpFails(agent, undefined, 'create_media_buy', buyRequest(), 'AUTH_MISSING')
    await mcpFails(agent, READER_TOKEN, 'create_media_buy', buyRequest(), 'INSUFFICIENT_PERMISSIONS')
  })

  it('replays the same buy for the same idempotency_key and refuses a changed request under it', async () => {
    const request = buyRequest()
    const first = await mcpOk(agent, BUYER_TOKEN, 'create_media_buy', request, CREATE)
    expect(first.replayed).toBe(false)
    const again = await mcpOk(agent, BUYER_TOKEN, 'create_media_buy', request, CREATE)
    expect(again.media_buy_id).toBe(first.media_buy_id)
    expect(again.replayed).toBe(true)
    await mcpFails(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      { ...request, packages: [{ ...request.packages[0], budget: 6000 }] },
      'IDEMPOTENCY_CONFLICT',
    )
  })
})

describe('get_media_buys', () => {
  it('pages through the live buys of the caller', async () => {
    const first = await mcpOk(agent, BUYER_TOKEN, 'get_media_buys', { pagination: { max_results: 2 } }, GET)
    expect(first.media_buys).toHaveLength(2)
    expect(first.pagination.has_more).toBe(true)
    const second = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { pagination: { max_results: 50, cursor: first.pagination.cursor } },
      GET,
    )
    const ids = [...first.media_buys, ...second.media_buys].map((buy: Body) => buy.media_buy_id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const buy of [...first.media_buys, ...second.media_buys]) expect(buy.status).not.toBe('canceled')
    const other = await mcpOk(agent, READER_TOKEN, 'get_media_buys', {}, GET)
    expect(other.media_buys).toEqual([])
  })
})
