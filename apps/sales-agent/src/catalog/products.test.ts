/**
 * get_products and list_creative_formats through the official MCP client on a running agent (SQLite file):
 * anonymous callers get standard products without prices, credentialed callers the full catalog with prices;
 * the brief ranks, filters narrow, the cursor pages; every format a product names resolves through
 * list_creative_formats; every answer validates against the official 3.1.19 schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { BUYER_TOKEN, KIT_SANDBOX, mcpFails, mcpOk, startTestAgent, type Body } from '../test-support.js'

const PRODUCTS = 'media-buy/get-products-response.json'
const FORMATS = 'creative/list-creative-formats-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const ids = (response: Body) => response.products.map((product: Body) => product.product_id)

describe('get_products', () => {
  it('gives anonymous callers standard products with pricing models but no prices', async () => {
    const response = await mcpOk(agent, undefined, 'get_products', { buying_mode: 'wholesale' }, PRODUCTS)
    expect(ids(response)).not.toContain('summit_sports_takeover')
    expect(response.products.length).toBe(5)
    for (const product of response.products)
      for (const option of product.pricing_options) {
        expect(Object.keys(option).sort()).toEqual(['currency', 'pricing_model', 'pricing_option_id'])
      }
  })

  it('gives credentialed callers the full catalog with prices', async () => {
    const response = await mcpOk(agent, BUYER_TOKEN, 'get_products', { buying_mode: 'wholesale' }, PRODUCTS)
    expect(ids(response)).toContain('summit_sports_takeover')
    const preroll = response.products.find((product: Body) => product.product_id === 'summit_sports_preroll')
    expect(preroll.pricing_options[0]).toMatchObject({
      pricing_model: 'cpm',
      fixed_price: 28,
      currency: 'USD',
    })
    expect(preroll.format_ids[0]).toEqual({ agent_url: 'http://127.0.0.1:4200', id: 'video_16x9_30s' })
  })

  it('ranks products by the brief and echoes context', async () => {
    const context = { correlation_id: 'brief-1' }
    const response = await mcpOk(
      agent,
      KIT_SANDBOX,
      'get_products',
      {
        buying_mode: 'brief',
        brief: 'Premium video inventory on sports and outdoor lifestyle publishers.',
        pagination: { max_results: 5 },
        context,
      },
      PRODUCTS,
    )
    expect(response.context).toEqual(context)
    expect(response.sandbox).toBe(true)
    expect(response.products[0].product_id).toBe('summit_sports_preroll')
    expect(response.products[0].brief_relevance).toContain('sports')
    expect(ids(response)).not.toContain('harbor_audio_streaming')
  })

  it('filters by channel, delivery type and fixed pricing', async () => {
    const audio = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'wholesale', filters: { channels: ['streaming_audio'] } },
      PRODUCTS,
    )
    expect(ids(audio)).toEqual(['harbor_audio_streaming'])
    const guaranteed = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'wholesale', filters: { delivery_type: 'guaranteed', is_fixed_price: true } },
      PRODUCTS,
    )
    expect(ids(guaranteed).sort()).toEqual([
      'lumen_ctv_primetime',
      'summit_sports_preroll',
      'summit_sports_takeover',
    ])
  })

  it('refines: request-scope delivery type applied, products kept, unknown ones and proposals unable', async () => {
    const refine = [
      { scope: 'request', ask: 'Only guaranteed packages. Must include completion rate SLA above 80%.' },
      { scope: 'product', product_id: 'harbor_audio_streaming', ask: 'Increase budget allocation to $30K' },
      { scope: 'product', product_id: 'no_such_product', ask: 'more' },
      { scope: 'proposal', proposal_id: 'prop_1', ask: 'finalize' },
    ]
    const refined = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'refine', refine },
      PRODUCTS,
    )
    expect(refined.refinement_applied.map((entry: Body) => [entry.scope, entry.status])).toEqual([
      ['request', 'applied'],
      ['product', 'applied'],
      ['product', 'unable'],
      ['proposal', 'unable'],
    ])
    expect(ids(refined)[0]).toBe('harbor_audio_streaming')
    for (const product of refined.products.slice(1)) expect(product.delivery_type).toBe('guaranteed')
  })

  it('pages with a cursor and refuses a foreign one', async () => {
    const first = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'wholesale', pagination: { max_results: 4 } },
      PRODUCTS,
    )
    expect(first.products).toHaveLength(4)
    expect(first.pagination).toMatchObject({ has_more: true, total_count: 6 })
    const second = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'wholesale', pagination: { max_results: 4, cursor: first.pagination.cursor } },
      PRODUCTS,
    )
    expect(second.products).toHaveLength(2)
    expect(second.pagination.has_more).toBe(false)
    expect(new Set([...ids(first), ...ids(second)]).size).toBe(6)
    await mcpFails(
      agent,
      BUYER_TOKEN,
      'get_products',
      { buying_mode: 'wholesale', pagination: { cursor: 'bm90LW91cnM' } },
      'INVALID_REQUEST',
    )
  })

  it('negotiates the version: another major is VERSION_UNSUPPORTED, major 3 is served', async () => {
    const context = { correlation_id: 'version' }
    for (const pin of [{ adcp_major_version: 99 }, { adcp_version: '99.0' }]) {
      const error = await mcpFails(
        agent,
        undefined,
        'get_products',
        { buying_mode: 'brief', brief: 'probe', ...pin, context },
        'VERSION_UNSUPPORTED',
      )
      expect(error.details.supported_versions).toEqual(['3.0', '3.1'])
    }
    await mcpOk(
      agent,
      undefined,
      'get_products',
      { buying_mode: 'brief', brief: 'probe', adcp_major_version: 3 },
      PRODUCTS,
    )
  })

  it('refuses a request the official schema refuses (INVALID_REQUEST naming the field)', async () => {
    const error = await mcpFails(
      agent,
      undefined,
      'get_products',
      { buying_mode: 'shopping' },
      'INVALID_REQUEST',
    )
    expect(error.field).toBe('buying_mode')
  })
})

describe('list_creative_formats', () => {
  it("resolves every format a product references, at the creative agent's URL", async () => {
    const catalog = await mcpOk(agent, BUYER_TOKEN, 'get_products', { buying_mode: 'wholesale' }, PRODUCTS)
    const formatIds = catalog.products.flatMap((product: Body) => product.format_ids)
    const listed = await mcpOk(agent, undefined, 'list_creative_formats', { format_ids: formatIds }, FORMATS)
    const found = new Set(listed.formats.map((format: Body) => format.format_id.id))
    for (const formatId of formatIds) expect(found.has(formatId.id), formatId.id).toBe(true)
    const one = await mcpOk(
      agent,
      undefined,
      'list_creative_formats',
      { format_ids: [formatIds[0]], context: { correlation_id: 'fmt' } },
      FORMATS,
    )
    expect(one.formats[0].format_id).toEqual(formatIds[0])
    expect(one.context).toEqual({ correlation_id: 'fmt' })
  })
})
