/**
 * The test controller acts only in the caller's sandbox, as the seller's records hold it (issue 22): a request's
 * own `account.sandbox: true` proves nothing; seeds never change what another principal or an anonymous caller
 * sees; ids another caller holds are refused, never overwritten; a caller's live buys, accounts and creatives are
 * out of reach even when it also holds sandbox accounts. Through the official MCP client; every answer validates
 * against the official schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  KIT_SANDBOX,
  buyRequest,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

const CONTROLLER = 'compliance/comply-test-controller-response.json'
const PRODUCTS = 'media-buy/get-products-response.json'
const FORMATS = 'media-buy/list-creative-formats-response.json'
const OTHER_KIT = 'demo-acme-outdoor-v1-second-holder'
const GRADER_TOKEN = 'grader-token-for-sandbox-principal-tests-0123'

let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent({
    TOKENS: `buyer-1:${BUYER_TOKEN}:read+write+delete+approve,grader:${GRADER_TOKEN}:read+write+delete+approve`,
    SANDBOX_PRINCIPALS: 'grader',
  })
})
afterAll(() => agent.close())

const control = (token: string | undefined, scenario: string, params: Body = {}, account: Body = {}) =>
  mcpOk(
    agent,
    token,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true, ...account } },
    CONTROLLER,
  )

/** What a caller sees of the catalog: every product, whole, in id order. */
const catalog = async (token: string | undefined, account?: Body) => {
  const answer = await mcpOk(
    agent,
    token,
    'get_products',
    { buying_mode: 'wholesale', ...(account ? { account } : {}) },
    PRODUCTS,
  )
  return (answer.products as Body[]).sort((a, b) => String(a.product_id).localeCompare(b.product_id))
}
const formatIds = async (token: string | undefined) => {
  const answer = await mcpOk(agent, token, 'list_creative_formats', {}, FORMATS)
  return (answer.formats as Body[]).map((format) => format.format_id.id as string)
}

const syncSandboxAccount = (token: string) =>
  mcpOk(
    agent,
    token,
    'sync_accounts',
    { idempotency_key: newKey(), accounts: [{ ...ACCOUNT, sandbox: true, billing: 'operator' }] },
    'account/sync-accounts-response.json',
  )

describe('the gate: the seller holds the account as sandbox', () => {
  it('refuses a configured token that asserts sandbox: true but holds no sandbox account', async () => {
    const answer = await control(BUYER_TOKEN, 'list_scenarios')
    expect(answer).toMatchObject({ success: false, error: 'FORBIDDEN' })
    expect(answer.error_detail ?? answer.message ?? '').toMatch(/sandbox account/)
    const seeded = await control(BUYER_TOKEN, 'seed_product', {
      product_id: 'gate_probe_product',
      fixture: { name: 'probe' },
    })
    expect(seeded).toMatchObject({ success: false, error: 'FORBIDDEN' })
  })

  it('admits a principal the operator lists in SANDBOX_PRINCIPALS, before it holds any account', async () => {
    expect(await control(GRADER_TOKEN, 'list_scenarios')).toMatchObject({ success: true })
  })

  it('admits the configured token once it holds a sandbox account, and refuses it naming a live one', async () => {
    // A live buy provisions the caller's live account.
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    const synced = await syncSandboxAccount(BUYER_TOKEN)
    const sandboxId = synced.accounts[0].account_id as string
    expect(await control(BUYER_TOKEN, 'list_scenarios')).toMatchObject({ success: true })
    expect(await control(BUYER_TOKEN, 'list_scenarios', {}, { account_id: sandboxId })).toMatchObject({
      success: true,
    })
    const accounts = (
      await mcpOk(agent, BUYER_TOKEN, 'list_accounts', {}, 'account/list-accounts-response.json')
    ).accounts as Body[]
    const liveAccountId = accounts.find((account) => account.sandbox !== true)!.account_id as string
    expect(await control(BUYER_TOKEN, 'list_scenarios', {}, { account_id: liveAccountId })).toMatchObject({
      success: false,
      error: 'FORBIDDEN',
    })
    // The natural key names the sandbox account (the controller's account always carries sandbox: true).
    expect(await control(BUYER_TOKEN, 'list_scenarios', {}, ACCOUNT)).toMatchObject({ success: true })
    expect(
      await control(BUYER_TOKEN, 'list_scenarios', {}, { brand: { domain: 'never-synced.example' } }),
    ).toMatchObject({ success: false, error: 'FORBIDDEN' })
  })
})

describe('seeds stay in the seeding caller sandbox', () => {
  it('a seeded product, a renamed and repriced demo product and a seeded format are seen by their seeder only', async () => {
    const before = { buyer: await catalog(BUYER_TOKEN), anonymous: await catalog(undefined) }
    const formatsBefore = await formatIds(OTHER_KIT)
    const product = (id: string, fixture: Body) =>
      control(KIT_SANDBOX, 'seed_product', { product_id: id, fixture })
    expect(await product('sandbox_only_product', { name: 'Sandbox only', channels: ['olv'] })).toMatchObject({
      success: true,
    })
    expect(
      await product('trailhead_lifestyle_display', { name: 'Renamed by a seed', description: 'seeded' }),
    ).toMatchObject({ success: true })
    expect(
      await control(KIT_SANDBOX, 'seed_pricing_option', {
        product_id: 'trailhead_lifestyle_display',
        pricing_option_id: 'cpm_standard',
        fixture: { pricing_model: 'cpm', currency: 'USD', fixed_price: 0.01 },
      }),
    ).toMatchObject({ success: true })
    expect(
      await control(KIT_SANDBOX, 'seed_creative_format', {
        format_id: 'sandbox_only_format',
        fixture: { format_id: { id: 'sandbox_only_format' }, name: 'Sandbox only format' },
      }),
    ).toMatchObject({ success: true })

    // The seeder sees its sandbox.
    const seeder = await catalog(KIT_SANDBOX)
    expect(seeder.map((entry) => entry.product_id)).toContain('sandbox_only_product')
    expect(seeder.find((entry) => entry.product_id === 'trailhead_lifestyle_display')?.name).toBe(
      'Renamed by a seed',
    )
    expect(await formatIds(KIT_SANDBOX)).toContain('sandbox_only_format')

    // Nobody else does: another buyer, an anonymous caller, another key of the same kit.
    expect(await catalog(BUYER_TOKEN)).toEqual(before.buyer)
    expect(await catalog(undefined)).toEqual(before.anonymous)
    expect((await catalog(OTHER_KIT)).map((entry) => entry.product_id)).not.toContain('sandbox_only_product')
    expect(await formatIds(OTHER_KIT)).toEqual(formatsBefore)
    expect(await formatIds(BUYER_TOKEN)).not.toContain('sandbox_only_format')

    // A live buy of another buyer is priced from the live catalog.
    const live = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    expect(live.media_buy_id).toBeTypeOf('string')
  })

  it('refuses to seed over an account or a media buy another caller holds, which stay as they were', async () => {
    const live = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    const read = async () => {
      const answer = await mcpOk(
        agent,
        BUYER_TOKEN,
        'get_media_buys',
        { media_buy_ids: [live.media_buy_id] },
        'media-buy/get-media-buys-response.json',
      )
      const { revision: _settled, status_as_of: _asOf, updated_at: _at, ...buy } = answer.media_buys[0]
      return { ...answer, media_buys: [buy] }
    }
    const before = await read()
    const buySeed = await control(KIT_SANDBOX, 'seed_media_buy', {
      media_buy_id: live.media_buy_id,
      fixture: { status: 'canceled' },
    })
    expect(buySeed).toMatchObject({ success: false, error: 'FORBIDDEN' })
    const accounts = (
      await mcpOk(agent, BUYER_TOKEN, 'list_accounts', {}, 'account/list-accounts-response.json')
    ).accounts as Body[]
    const accountSeed = await control(KIT_SANDBOX, 'seed_account', {
      account_id: accounts.find((account) => account.sandbox !== true)!.account_id,
      fixture: { status: 'suspended' },
    })
    expect(accountSeed).toMatchObject({ success: false, error: 'FORBIDDEN' })
    const after = await mcpOk(agent, BUYER_TOKEN, 'list_accounts', {}, 'account/list-accounts-response.json')
    expect(after.accounts).toEqual(accounts)
    expect(await read()).toEqual(before)
  })
})

describe("a caller's live records are out of its controller's reach", () => {
  it('refuses to force, or to simulate delivery on, a live buy of a caller that also holds a sandbox account', async () => {
    await syncSandboxAccount(BUYER_TOKEN)
    const live = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    const id = live.media_buy_id as string
    const buyStatus = async () =>
      (
        await mcpOk(
          agent,
          BUYER_TOKEN,
          'get_media_buys',
          { media_buy_ids: [id] },
          'media-buy/get-media-buys-response.json',
        )
      ).media_buys[0].status
    const before = await buyStatus()
    expect(
      await control(BUYER_TOKEN, 'simulate_delivery', { media_buy_id: id, impressions: 1_000_000 }),
    ).toMatchObject({ success: false, error: 'FORBIDDEN' })
    expect(
      await control(BUYER_TOKEN, 'force_media_buy_status', { media_buy_id: id, status: 'completed' }),
    ).toMatchObject({ success: false, error: 'FORBIDDEN' })
    expect(await buyStatus()).toBe(before)
  })

  it("does not let one caller complete another's forced task, nor take its task id", async () => {
    const taskId = `task_forced_${newKey()}`
    expect(
      await control(KIT_SANDBOX, 'force_create_media_buy_arm', { arm: 'submitted', task_id: taskId }),
    ).toMatchObject({ success: true })
    const submitted = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({ account: { ...ACCOUNT, sandbox: true } }),
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted).toMatchObject({ status: 'submitted', task_id: taskId })
    expect(
      await control(OTHER_KIT, 'force_task_completion', { task_id: taskId, result: { media_buy_id: 'x' } }),
    ).toMatchObject({ success: false, error: 'NOT_FOUND' })
    expect(
      await control(OTHER_KIT, 'force_create_media_buy_arm', { arm: 'submitted', task_id: taskId }),
    ).toMatchObject({ success: false, error: 'FORBIDDEN' })
  })

  it('a forced submitted arm never answers the same caller on a live account', async () => {
    await syncSandboxAccount(BUYER_TOKEN)
    expect(
      await control(BUYER_TOKEN, 'force_create_media_buy_arm', {
        arm: 'submitted',
        task_id: `task_live_${newKey()}`,
      }),
    ).toMatchObject({ success: true })
    const live = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    expect(live.status).not.toBe('submitted')
    expect(live.media_buy_id).toBeTypeOf('string')
  })
})
