/**
 * The media_buy_seller storyboard (compliance/3.1.19/protocols/media-buy/index.yaml) walked step by step with
 * its own sample requests, the acme-outdoor test-kit key and controller seeding, over MCP: every answer validates against the step's response schema and passes the step's field checks
 * (context echoed, products with format_ids and publisher_properties, a format that resolves, the buy's context
 * on get_media_buys, creatives synced, delivery reported).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from './service.js'
import { KIT_SANDBOX, mcpOk, newKey, startTestAgent, type Body } from './test-support.js'

let agent: RunningSalesAgent
const account = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' }
const ctx = (step: string) => ({ correlation_id: `media_buy_seller--${step}` })
const control = (scenario: string, params: Body) =>
  mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true } },
    'compliance/comply-test-controller-response.json',
  )

beforeAll(async () => {
  agent = await startTestAgent({ PUBLIC_URL: 'https://sales.adwire.test' })
  // controller_seeding: the storyboard's fixtures.
  await control('seed_product', {
    product_id: 'sports_preroll_q2',
    fixture: { delivery_type: 'non_guaranteed', channels: ['video'], format_ids: [{ id: 'video_16x9_30s' }] },
  })
  await control('seed_product', {
    product_id: 'lifestyle_display_q2',
    fixture: {
      delivery_type: 'non_guaranteed',
      channels: ['display'],
      format_ids: [{ id: 'display_300x250' }],
    },
  })
  await control('seed_pricing_option', {
    product_id: 'sports_preroll_q2',
    pricing_option_id: 'cpm_non_guaranteed',
    fixture: { pricing_model: 'cpm', currency: 'USD', floor_price: 22 },
  })
  await control('seed_pricing_option', {
    product_id: 'lifestyle_display_q2',
    pricing_option_id: 'cpm_standard',
    fixture: { pricing_model: 'cpm', currency: 'USD', floor_price: 8 },
  })
})
afterAll(() => agent.close())

const step = async (task: string, args: Body, schema: string) => {
  const response = await mcpOk(agent, KIT_SANDBOX, task, args, schema)
  if (args.context) expect(response.context).toEqual(args.context)
  return response
}

describe('media_buy_seller over MCP', () => {
  it('passes every step with the storyboard sample requests', async () => {
    const caps = await step(
      'get_adcp_capabilities',
      { context: ctx('get_capabilities') },
      'protocol/get-adcp-capabilities-response.json',
    )
    expect(caps.supported_protocols).toContain('media_buy')

    const accounts = await step(
      'sync_accounts',
      {
        accounts: [{ ...account, billing: 'operator', payment_terms: 'net_30' }],
        idempotency_key: newKey(),
        context: ctx('sync_accounts'),
      },
      'account/sync-accounts-response.json',
    )
    expect(accounts.accounts[0]).toMatchObject({ account_id: expect.any(String), status: 'active' })

    await step(
      'sync_governance',
      {
        accounts: [
          {
            account,
            governance_agents: [
              {
                url: 'https://test-agent.adcontextprotocol.org',
                authentication: {
                  schemes: ['Bearer'],
                  credentials: 'gov-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
                },
              },
            ],
          },
        ],
        idempotency_key: newKey(),
        context: ctx('sync_governance'),
        ext: { test_platform: { governance_tier: 'standard' } },
      },
      'account/sync-governance-response.json',
    )

    const products = await step(
      'get_products',
      {
        buying_mode: 'brief',
        brief:
          'Premium video inventory on sports and outdoor lifestyle publishers. Q2 flight, $50K budget. Adults 25-54, US and Canada.',
        pagination: { max_results: 5 },
        account,
        context: ctx('get_products_brief'),
      },
      'media-buy/get-products-response.json',
    )
    const first = products.products[0]
    expect(first.product_id).toEqual(expect.any(String))
    expect(first.delivery_type).toEqual(expect.any(String))
    expect(first.format_ids[0]).toMatchObject({ agent_url: expect.any(String), id: expect.any(String) })
    expect(first.publisher_properties.length).toBeGreaterThan(0)

    const formats = await step(
      'list_creative_formats',
      { format_ids: [first.format_ids[0]], context: ctx('list_formats_integrity') },
      'creative/list-creative-formats-response.json',
    )
    expect(formats.formats[0].format_id).toEqual(first.format_ids[0])

    const created = await step(
      'create_media_buy',
      {
        brand: { domain: 'acmeoutdoor.example' },
        account: { ...account, sandbox: true },
        start_time: 'asap',
        end_time: '2099-06-30T23:59:59Z',
        packages: [
          {
            product_id: 'sports_preroll_q2',
            budget: 25000,
            pricing_option_id: 'cpm_non_guaranteed',
            creative_assignments: [{ creative_id: 'video_30s_trail_pro' }],
          },
          { product_id: 'lifestyle_display_q2', budget: 15000, pricing_option_id: 'cpm_standard' },
        ],
        push_notification_config: {
          url: 'https://buyer.example/webhooks/adcp',
          authentication: { schemes: ['HMAC-SHA256'], credentials: 'media-buy-seller-webhook-secret-token' },
        },
        idempotency_key: newKey(),
        context: ctx('create_media_buy'),
      },
      'media-buy/create-media-buy-response.json',
    )
    const mediaBuyId = created.media_buy_id
    expect(mediaBuyId).toEqual(expect.any(String))

    const buys = await step(
      'get_media_buys',
      { account, media_buy_ids: [mediaBuyId], context: ctx('check_buy_status') },
      'media-buy/get-media-buys-response.json',
    )
    expect(buys.media_buys[0]).toMatchObject({
      media_buy_id: mediaBuyId,
      status: expect.any(String),
      context: ctx('create_media_buy'),
    })

    const synced = await step(
      'sync_creatives',
      {
        account,
        creatives: [
          {
            creative_id: 'video_30s_trail_pro',
            name: 'Trail Pro 3000 - 30s CTV Spot',
            format_id:
              products.products.find((p: Body) => p.product_id === 'sports_preroll_q2')?.format_ids[0] ??
              first.format_ids[0],
            assets: {
              video: {
                asset_type: 'video',
                url: 'https://cdn.pinnacle-agency.example/trail-pro-30s.mp4',
                width: 1920,
                height: 1080,
                duration_ms: 30000,
                mime_type: 'video/mp4',
              },
            },
          },
          {
            creative_id: 'display_trail_pro_300x250',
            name: 'Trail Pro 3000 - Display 300x250',
            format_id: { agent_url: 'https://your-platform.example.com', id: 'display_300x250' },
            assets: {
              image: {
                asset_type: 'image',
                url: 'https://cdn.pinnacle-agency.example/trail-pro-300x250.png',
                width: 300,
                height: 250,
                mime_type: 'image/png',
              },
            },
          },
        ],
        idempotency_key: newKey(),
        context: ctx('sync_creatives'),
      },
      'creative/sync-creatives-response.json',
    )
    expect(synced.creatives[0]).toMatchObject({ action: 'created', status: 'approved' })

    const delivery = await step(
      'get_media_buy_delivery',
      {
        account,
        media_buy_ids: [mediaBuyId],
        include_package_daily_breakdown: true,
        context: ctx('get_delivery'),
      },
      'media-buy/get-media-buy-delivery-response.json',
    )
    expect(delivery.media_buy_deliveries[0].media_buy_id).toBe(mediaBuyId)
  })
})
