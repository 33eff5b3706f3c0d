/**
 * Controller fixtures made products: whatever part of a product a fixture gives, the result is a valid
 * core/product.json object (a partial reporting_capabilities, as the vendor-metric storyboards seed it, is
 * completed with the defaults and keeps what the fixture set).
 */
import { describe, expect, it } from 'vitest'
import { expectOfficial } from '@adwire/agent-test-kit'
import { productFromFixture, withPricingOption } from './product-source.js'

const AGENT = 'http://127.0.0.1:4200'

describe('productFromFixture', () => {
  it('completes a partial reporting_capabilities and keeps what the fixture set', () => {
    const vendor = { vendor: { domain: 'prism.example' }, metric_id: 'attention_seconds' }
    const product = productFromFixture(
      'vendor_metrics_product',
      { reporting_capabilities: { vendor_metrics: [vendor], timezone: 'America/New_York' } },
      AGENT,
    )
    expectOfficial('core/product.json', product)
    expect(product.reporting_capabilities).toMatchObject({
      vendor_metrics: [vendor],
      timezone: 'America/New_York',
      available_reporting_frequencies: ['hourly', 'daily'],
      supports_webhooks: true,
    })
  })

  it('makes an empty fixture, and one with a seeded pricing option, valid products', () => {
    const bare = productFromFixture('bare_product', {}, AGENT)
    expectOfficial('core/product.json', bare)
    const priced = withPricingOption(bare, 'cpm_usd', {
      pricing_model: 'cpm',
      currency: 'USD',
      fixed_price: 9,
    })
    expectOfficial('core/product.json', priced)
  })
})
