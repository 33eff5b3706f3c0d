/**
 * get_products' `required_vendor_metrics` filter (core/product-filters.json): only products whose
 * `reporting_capabilities.vendor_metrics` cover every entry (a vendor, a metric_id, or both) are returned;
 * the others are silently left out, never an error.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { KIT_SANDBOX, mcpOk, startTestAgent, type Body } from '../test-support.js'

let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
  await mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    {
      scenario: 'seed_product',
      account: { sandbox: true },
      params: {
        product_id: 'attention_display',
        fixture: {
          channels: ['display'],
          reporting_capabilities: {
            vendor_metrics: [{ vendor: { domain: 'prism.example' }, metric_id: 'attention_seconds' }],
          },
        },
      },
    },
    'compliance/comply-test-controller-response.json',
  )
})
afterAll(() => agent.close())

const ids = async (required: Body[]) =>
  (
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'get_products',
      { buying_mode: 'wholesale', filters: { required_vendor_metrics: required } },
      'media-buy/get-products-response.json',
    )
  ).products.map((product: Body) => product.product_id)

it('keeps only the products whose vendor metrics cover every entry', async () => {
  expect(await ids([{ vendor: { domain: 'prism.example' }, metric_id: 'attention_seconds' }])).toEqual([
    'attention_display',
  ])
  expect(await ids([{ vendor: { domain: 'prism.example' } }])).toEqual(['attention_display'])
  expect(await ids([{ metric_id: 'attention_seconds' }])).toEqual(['attention_display'])
  expect(await ids([{ vendor: { domain: 'prism.example' }, metric_id: 'other_metric' }])).toEqual([])
  expect(
    await ids([{ vendor: { domain: 'prism.example' } }, { vendor: { domain: 'nobody.example' } }]),
  ).toEqual([])
})
