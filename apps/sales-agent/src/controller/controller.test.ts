/**
 * comply_test_controller through the official MCP client with the official test-kit keys: the live key is
 * FORBIDDEN before any scenario runs (also a non-sandbox caller); seeded products and pricing options are sold;
 * a rejected creative impairs the packages using it (health, impairments[]) until approved again; the state
 * machine refuses completed → active with INVALID_TRANSITION; simulated delivery shows in the report. Every answer validates against the official schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  KIT_LIVE,
  KIT_SANDBOX,
  buyRequest,
  displayCreative,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

const CONTROLLER = 'compliance/comply-test-controller-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const control = (scenario: string, params: Body = {}, token = KIT_SANDBOX, extra: Body = {}) =>
  mcpOk(
    agent,
    token,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true }, ...extra },
    CONTROLLER,
  )
const ok = (token: string, task: string, args: Body, schema: string) =>
  mcpOk(agent, token, task, args, schema)
const sandboxAccount = { ...ACCOUNT, sandbox: true }

describe('the sandbox gate', () => {
  it('refuses the live test-kit key with FORBIDDEN before any scenario, echoing context', async () => {
    const denied = await control(
      'force_creative_status',
      { creative_id: 'probe', status: 'approved' },
      KIT_LIVE,
      {
        context: { correlation_id: 'gate' },
      },
    )
    expect(denied).toMatchObject({ success: false, error: 'FORBIDDEN', context: { correlation_id: 'gate' } })
  })

  it('lists its scenarios to a sandbox caller, the same as capabilities advertise', async () => {
    const listed = await control('list_scenarios')
    const caps = await ok(KIT_SANDBOX, 'get_adcp_capabilities', {}, 'core/protocol-envelope.json')
    expect(listed.scenarios.filter((name: string) => name !== 'list_scenarios')).toEqual(
      caps.compliance_testing.scenarios,
    )
    expect((await control('no_such_scenario')).error).toBe('UNKNOWN_SCENARIO')
  })
})

describe('seeding and forcing', () => {
  it('sells a seeded product at its seeded pricing option', async () => {
    await control('seed_product', {
      product_id: 'sports_preroll_q2',
      fixture: { delivery_type: 'non_guaranteed', channels: ['olv'], format_ids: [{ id: 'video_16x9_30s' }] },
    })
    await control('seed_pricing_option', {
      product_id: 'sports_preroll_q2',
      pricing_option_id: 'cpm_non_guaranteed',
      fixture: { pricing_model: 'cpm', currency: 'USD', floor_price: 22 },
    })
    const products = await ok(
      KIT_SANDBOX,
      'get_products',
      { buying_mode: 'wholesale' },
      'media-buy/get-products-response.json',
    )
    const seeded = products.products.find((product: Body) => product.product_id === 'sports_preroll_q2')
    // The seeded option beside the `default` one every seeded product has (the canonical compliance fixture's).
    expect(seeded.pricing_options).toEqual([
      { pricing_option_id: 'default', pricing_model: 'cpm', currency: 'USD', fixed_price: 10 },
      { pricing_option_id: 'cpm_non_guaranteed', pricing_model: 'cpm', currency: 'USD', floor_price: 22 },
    ])
    expect(seeded.format_ids).toEqual([{ agent_url: 'http://127.0.0.1:4200', id: 'video_16x9_30s' }])
    const buy = await ok(
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest(
        { account: sandboxAccount },
        { product_id: 'sports_preroll_q2', pricing_option_id: 'cpm_non_guaranteed', bid_price: 25 },
      ),
      'media-buy/create-media-buy-response.json',
    )
    expect(buy.sandbox).toBe(true)
  })

  it('impairs the packages of a rejected creative and clears it once approved', async () => {
    await ok(
      KIT_SANDBOX,
      'sync_creatives',
      { idempotency_key: newKey(), account: sandboxAccount, creatives: [displayCreative('risky')] },
      'creative/sync-creatives-response.json',
    )
    const buy = await ok(
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({ account: sandboxAccount }, { creative_assignments: [{ creative_id: 'risky' }] }),
      'media-buy/create-media-buy-response.json',
    )
    const rejected = await control('force_creative_status', {
      creative_id: 'risky',
      status: 'rejected',
      rejection_reason: 'brand safety',
    })
    expect(rejected).toMatchObject({ success: true, previous_state: 'approved', current_state: 'rejected' })
    const read = async () =>
      (
        await ok(
          KIT_SANDBOX,
          'get_media_buys',
          { media_buy_ids: [buy.media_buy_id] },
          'media-buy/get-media-buys-response.json',
        )
      ).media_buys[0]
    const impaired = await read()
    expect(impaired.health).toBe('impaired')
    expect(impaired.impairments[0]).toMatchObject({
      resource_type: 'creative',
      resource_id: 'risky',
      package_ids: [buy.packages[0].package_id],
      reason_code: 'content_rejected',
      transition: { to: 'rejected' },
    })
    expect(impaired.status).toBe('active')
    await control('force_creative_status', { creative_id: 'risky', status: 'approved' })
    expect(await read()).toMatchObject({ health: 'ok', impairments: [] })
    await control('force_creative_purge', {
      creative_id: 'risky',
      purge_kind: 'soft',
      reason_code: 'takedown_request',
    })
    expect((await read()).impairments[0]).toMatchObject({
      reason_code: 'seller_removed',
      transition: { to: 'withdrawn' },
    })
    const listed = await ok(
      KIT_SANDBOX,
      'list_creatives',
      { include_purged: true, filters: { creative_ids: ['risky'] } },
      'creative/list-creatives-response.json',
    )
    expect(listed.creatives[0].purge).toMatchObject({ kind: 'soft', reason_code: 'takedown_request' })
  })

  it('follows the state machine: completed → active is INVALID_TRANSITION', async () => {
    await control('seed_media_buy', { media_buy_id: 'mb_seeded', fixture: { status: 'active' } })
    expect(
      await control('force_media_buy_status', { media_buy_id: 'mb_seeded', status: 'completed' }),
    ).toMatchObject({
      success: true,
      previous_state: 'active',
      current_state: 'completed',
    })
    expect(
      await control('force_media_buy_status', { media_buy_id: 'mb_seeded', status: 'active' }),
    ).toMatchObject({
      success: false,
      error: 'INVALID_TRANSITION',
      current_state: 'completed',
    })
    expect(
      (await control('force_media_buy_status', { media_buy_id: 'mb_nope', status: 'paused' })).error,
    ).toBe('NOT_FOUND')
  })

  it('adds simulated delivery to the report', async () => {
    await control('seed_media_buy', { media_buy_id: 'mb_sim', fixture: { status: 'active' } })
    const simulated = await control('simulate_delivery', {
      media_buy_id: 'mb_sim',
      impressions: 10_000,
      clicks: 50,
      reported_spend: { amount: 120, currency: 'USD' },
    })
    expect(simulated).toMatchObject({
      success: true,
      simulated: { impressions: 10_000, clicks: 50, spend: 120 },
    })
    const report = await ok(
      KIT_SANDBOX,
      'get_media_buy_delivery',
      { media_buy_ids: ['mb_sim'] },
      'media-buy/get-media-buy-delivery-response.json',
    )
    expect(report.media_buy_deliveries[0].totals.impressions).toBeGreaterThanOrEqual(10_000)
    expect(report.media_buy_deliveries[0].totals.clicks).toBeGreaterThanOrEqual(50)
  })

  it('forces account status', async () => {
    await control('seed_account', {
      account_id: 'acct_sandbox_1',
      fixture: { brand: { domain: 'sb.example' } },
    })
    expect(
      await control('force_account_status', { account_id: 'acct_sandbox_1', status: 'suspended' }),
    ).toMatchObject({
      previous_state: 'active',
      current_state: 'suspended',
    })
  })
})
