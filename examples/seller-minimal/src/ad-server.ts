/**
 * The in-memory ad server this seller sells: two products (the catalog) and how they deliver (the delivery
 * model). A real seller reads both from its ad server; nothing else in the seller is its own.
 */
import {
  dayOf,
  firstPartyMeasurement,
  servedSeconds,
  type CatalogProduct,
  type DayDelivery,
  type DeliveryModel,
} from '@adwire/seller'

const PUBLISHER = 'riverside-gazette.example'

const product = (
  id: string,
  name: string,
  channel: 'display' | 'olv',
  delivery: 'guaranteed' | 'non_guaranteed',
  formats: string[],
  pricing: Record<string, unknown>[],
  creativeAgentUrl: string,
): CatalogProduct => ({
  custom: false,
  keywords: [channel === 'olv' ? 'video' : 'display', 'news', 'local'],
  product: {
    product_id: id,
    name,
    description: `${name} across the Riverside Gazette.`,
    publisher_properties: [{ publisher_domain: PUBLISHER, selection_type: 'all' }],
    channels: [channel],
    format_ids: formats.map((format) => ({ agent_url: creativeAgentUrl, id: format })),
    delivery_type: delivery,
    pricing_options: pricing,
    delivery_measurement: firstPartyMeasurement(PUBLISHER),
    reporting_capabilities: {
      available_reporting_frequencies: ['daily'],
      expected_delay_minutes: 60,
      timezone: 'UTC',
      supports_webhooks: true,
      available_metrics: ['impressions', 'spend', 'clicks', ...(channel === 'olv' ? ['completed_views'] : [])],
      date_range_support: 'date_range',
      windowed_pull_granularities: ['daily'],
    },
  },
})

/** The products, their formats at the creative agent's standard formats. */
export const catalog = (creativeAgentUrl: string): CatalogProduct[] => [
  product(
    'gazette_display',
    'Run-of-site display',
    'display',
    'non_guaranteed',
    ['display_300x250_image', 'display_728x90_image', 'display_300x250'],
    [
      { pricing_option_id: 'cpm_auction', pricing_model: 'cpm', currency: 'USD', floor_price: 4 },
      { pricing_option_id: 'cpm_fixed', pricing_model: 'cpm', currency: 'USD', fixed_price: 9 },
    ],
    creativeAgentUrl,
  ),
  product(
    'gazette_preroll',
    'Guaranteed video pre-roll',
    'olv',
    'guaranteed',
    ['video_16x9_30s', 'video_16x9_15s'],
    [
      {
        pricing_option_id: 'cpm_guaranteed',
        pricing_model: 'cpm',
        currency: 'USD',
        fixed_price: 24,
        min_spend_per_package: 5000,
      },
    ],
    creativeAgentUrl,
  ),
]

/**
 * Delivery: each package serves its budget evenly over the flight, for every second its buy was live, one row
 * per UTC day (clicks at 0.2 %, video completions at 70 %), never spending more than its budget.
 */
export const delivery: DeliveryModel = (buy, pkg, pricing, now) => {
  const first = buy.serving[0]?.[0]
  if (first === undefined || pkg.canceled) return []
  const flight = Math.max(1, (Date.parse(buy.end_time) - Date.parse(buy.start_time)) / 1000)
  const units = pricing.model === 'cpm' ? (pkg.budget / pricing.price) * 1000 : pkg.budget / pricing.price
  const days: DayDelivery[] = []
  let spent = 0
  for (let day = Math.floor(first / 86_400) * 86_400; day < now && spent < pkg.budget; day += 86_400) {
    const impressions = Math.floor((units / flight) * servedSeconds(buy, day, day + 86_400, now))
    if (impressions === 0) continue
    const spend = Math.min(pkg.budget - spent, pricing.model === 'cpm' ? (impressions / 1000) * pricing.price : impressions * pricing.price)
    spent += spend
    days.push({
      date: dayOf(day),
      impressions,
      spend: Math.round(spend * 100) / 100,
      clicks: Math.floor(impressions * 0.002),
      completed_views: pricing.video ? Math.floor(impressions * 0.7) : 0,
      measurable: impressions,
      viewable: Math.floor(impressions * 0.6),
    })
  }
  return days
}
