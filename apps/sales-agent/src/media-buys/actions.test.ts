/**
 * The available_actions scenario: a seeded product's allowed_actions[] become the buy's available_actions[]
 * (mode, SLA, terms), persisted for get_media_buys, and update_media_buy enforces them: the self-serve budget
 * increase succeeds; an approval-routed flight extension or cancel, a decrease outside its status and an
 * action the product does not offer are ACTION_NOT_ALLOWED with the attempted action and the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  KIT_SANDBOX,
  buyRequest,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

let agent: RunningSalesAgent
const CONTROLLER = 'compliance/comply-test-controller-response.json'
const template = [
  { action: 'increase_budget', modes: ['self_serve'], sla: { response_max: 'PT5M', completion_max: 'PT1H' } },
  {
    action: 'extend_flight',
    modes: ['requires_approval'],
    sla: { response_max: 'PT4H', completion_max: 'P2D' },
    terms_ref: 'terms://available-actions/extension',
  },
  { action: 'cancel', modes: ['requires_approval'], sla: { response_max: 'PT1H', completion_max: 'P1D' } },
  { action: 'decrease_budget', modes: ['self_serve'], allowed_statuses: ['paused'] },
]

beforeAll(async () => {
  agent = await startTestAgent()
  const control = (scenario: string, params: Body) =>
    mcpOk(
      agent,
      KIT_SANDBOX,
      'comply_test_controller',
      { scenario, params, account: { sandbox: true } },
      CONTROLLER,
    )
  await control('seed_product', {
    product_id: 'available_actions_display',
    fixture: {
      name: 'Available Actions Display Package',
      delivery_type: 'non_guaranteed',
      channels: ['display'],
      format_ids: [{ id: 'display_300x250' }],
      allowed_actions: template,
    },
  })
  await control('seed_pricing_option', {
    product_id: 'available_actions_display',
    pricing_option_id: 'available_actions_cpm',
    fixture: { pricing_model: 'cpm', currency: 'USD', floor_price: 8 },
  })
})
afterAll(() => agent.close())

describe('available_actions', () => {
  it('resolves the product template on the buy and enforces it on update', async () => {
    const products = await mcpOk(
      agent,
      KIT_SANDBOX,
      'get_products',
      {
        buying_mode: 'brief',
        brief: 'available actions display package',
        filters: { channels: ['display'] },
      },
      'media-buy/get-products-response.json',
    )
    expect(products.products[0]).toMatchObject({
      product_id: 'available_actions_display',
      allowed_actions: template,
    })
    const account = { ...ACCOUNT, sandbox: true }
    const created = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest(
        { account },
        {
          product_id: 'available_actions_display',
          pricing_option_id: 'available_actions_cpm',
          budget: 10000,
          bid_price: 9,
        },
      ),
      'media-buy/create-media-buy-response.json',
    )
    expect(created.available_actions).toEqual([
      { action: 'increase_budget', mode: 'self_serve', sla: template[0]!.sla },
      {
        action: 'extend_flight',
        mode: 'requires_approval',
        sla: template[1]!.sla,
        terms_ref: 'terms://available-actions/extension',
      },
      { action: 'cancel', mode: 'requires_approval', sla: template[2]!.sla },
    ])
    const read = await mcpOk(
      agent,
      KIT_SANDBOX,
      'get_media_buys',
      { media_buy_ids: [created.media_buy_id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0].available_actions).toEqual(created.available_actions)
    const pkg = created.packages[0].package_id
    const update = (args: Body) => ({
      idempotency_key: newKey(),
      account,
      media_buy_id: created.media_buy_id,
      ...args,
    })
    const increased = await mcpOk(
      agent,
      KIT_SANDBOX,
      'update_media_buy',
      update({ packages: [{ package_id: pkg, budget: 12000 }] }),
      'media-buy/update-media-buy-response.json',
    )
    expect(increased.total_budget).toBe(12000)
    for (const [args, action, reason] of [
      [{ end_time: '2099-08-31T23:59:59Z' }, 'extend_flight', 'mode_mismatch'],
      [{ canceled: true }, 'cancel', 'mode_mismatch'],
      [{ packages: [{ package_id: pkg, budget: 11000 }] }, 'decrease_budget', 'wrong_status'],
      [{ paused: true }, 'pause', 'not_supported_on_product'],
    ] as const) {
      const error = await mcpFails(agent, KIT_SANDBOX, 'update_media_buy', update(args), 'ACTION_NOT_ALLOWED')
      expect(error.details).toMatchObject({ attempted_action: action, reason })
    }
  })
})
