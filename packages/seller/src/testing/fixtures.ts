/**
 * What this package's tests share (not exported): seller settings with every switch named, and a one-product
 * catalog (a homepage display product priced by CPM).
 */
import { firstPartyMeasurement, type CatalogProduct } from '../catalog/types.js'
import type { SellerSettings } from '../settings.js'

/** The creative agent the test catalog's formats name. */
export const TEST_CREATIVE_AGENT_URL = 'http://127.0.0.1:4200'

/** Settings with no review, auto-approved creatives and no test-only switch; `overrides` replace fields. */
export function testSettings(overrides: Partial<SellerSettings> = {}): SellerSettings {
  return {
    creativeAgentUrl: TEST_CREATIVE_AGENT_URL,
    buyReview: 'none',
    reviewBudgetThreshold: 100_000,
    reviewSeconds: 0,
    creativeReview: 'auto',
    complyTestController: false,
    sandboxPrincipals: [],
    allowInsecureWebhookUrls: false,
    ...overrides,
  }
}

/** The `homepage` product (display, non-guaranteed, CPM 5 USD), reporting at `frequencies`. */
export function homepageCatalog(
  frequencies: readonly ('hourly' | 'daily' | 'monthly')[] = ['daily'],
  creativeAgentUrl = TEST_CREATIVE_AGENT_URL,
): CatalogProduct[] {
  return [
    {
      custom: false,
      keywords: [],
      product: {
        product_id: 'homepage',
        name: 'Homepage display',
        description: 'Display on the homepage.',
        publisher_properties: [{ publisher_domain: 'pub.example', selection_type: 'all' }],
        channels: ['display'],
        format_ids: [{ agent_url: creativeAgentUrl, id: 'display_300x250_image' }],
        delivery_type: 'non_guaranteed',
        pricing_options: [
          { pricing_option_id: 'cpm', pricing_model: 'cpm', currency: 'USD', fixed_price: 5 },
        ],
        delivery_measurement: firstPartyMeasurement('pub.example'),
        reporting_capabilities: { available_reporting_frequencies: [...frequencies] },
      },
    },
  ]
}
