/**
 * The in-memory ad server this seller sells: two products (the catalog), how they deliver (the delivery model)
 * and its order book (the platform: bookings and the buyer's changes). A real seller calls its ad server for
 * each; nothing else in the seller is its own.
 */
import {
  dayOf,
  firstPartyMeasurement,
  servedSeconds,
  type CatalogProduct,
  type DayDelivery,
  type DeliveryModel,
  type SellerPlatform,
} from '@adwire/seller'

const PUBLISHER = 'trailside-sports.example'

interface Spec {
  id: string
  name: string
  description: string
  channel: 'display' | 'olv'
  delivery: 'guaranteed' | 'non_guaranteed'
  formats: string[]
  pricing: Record<string, unknown>[]
  /** Words a buyer's brief is matched against, beyond the name, description and channel. */
  keywords: string[]
}

const product = (spec: Spec, creativeAgentUrl: string): CatalogProduct => ({
  custom: false,
  keywords: spec.keywords,
  product: {
    product_id: spec.id,
    name: spec.name,
    description: spec.description,
    publisher_properties: [{ publisher_domain: PUBLISHER, selection_type: 'all' }],
    channels: [spec.channel],
    format_ids: spec.formats.map((id) => ({ agent_url: creativeAgentUrl, id })),
    delivery_type: spec.delivery,
    pricing_options: spec.pricing,
    delivery_measurement: firstPartyMeasurement(PUBLISHER),
    reporting_capabilities: {
      available_reporting_frequencies: ['hourly', 'daily'],
      expected_delay_minutes: 60,
      timezone: 'UTC',
      supports_webhooks: true,
      available_metrics: [
        'impressions',
        'spend',
        'clicks',
        ...(spec.channel === 'olv' ? ['completed_views'] : []),
      ],
      date_range_support: 'date_range',
      windowed_pull_granularities: ['daily'],
    },
  },
})

const SPECS: Spec[] = [
  {
    id: 'trailside_display',
    name: 'Run-of-site display',
    description:
      'IAB image units, one creative per placement, across Trailside Sports: sports and outdoor lifestyle news.',
    channel: 'display',
    delivery: 'non_guaranteed',
    formats: ['display_300x250_image', 'display_728x90_image', 'display_300x250'],
    pricing: [
      // An auction over a floor (price_guidance: clearing-price percentiles), and a fixed price.
      {
        pricing_option_id: 'cpm_auction',
        pricing_model: 'cpm',
        currency: 'USD',
        floor_price: 4,
        price_guidance: { p25: 4.5, p50: 5, p75: 6, p90: 7.5 },
      },
      { pricing_option_id: 'cpm_fixed', pricing_model: 'cpm', currency: 'USD', fixed_price: 9 },
    ],
    keywords: ['sports', 'outdoor', 'lifestyle', 'banner'],
  },
  {
    id: 'trailside_preroll',
    name: 'Guaranteed video pre-roll',
    description: '15 and 30 second pre-roll with guaranteed delivery on Trailside Sports highlights.',
    channel: 'olv',
    delivery: 'guaranteed',
    formats: ['video_16x9_30s', 'video_16x9_15s'],
    pricing: [
      {
        pricing_option_id: 'cpm_guaranteed',
        pricing_model: 'cpm',
        currency: 'USD',
        fixed_price: 24,
        min_spend_per_package: 5000,
      },
      { pricing_option_id: 'cpcv_guaranteed', pricing_model: 'cpcv', currency: 'USD', fixed_price: 0.05 },
    ],
    keywords: ['sports', 'outdoor', 'lifestyle', 'premium', 'preroll'],
  },
]

/** The products, their formats among the creative agent's standard formats. */
export const catalog = (creativeAgentUrl: string): CatalogProduct[] =>
  SPECS.map((spec) => product(spec, creativeAgentUrl))

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
    const spend = Math.min(
      pkg.budget - spent,
      pricing.model === 'cpm' ? (impressions / 1000) * pricing.price : impressions * pricing.price,
    )
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

/** The order book: a booked buy per id (booked once, also when asked again after a crash) and its state. */
export const orders = new Map<string, { state: 'live' | 'paused' | 'canceled'; packages: number }>()

/** Bookings and changes, called before the seller stores them (never inside a database transaction). */
export const platform: SellerPlatform = {
  async createOrder(buy) {
    if (!orders.has(buy.media_buy_id))
      orders.set(buy.media_buy_id, { state: 'live', packages: buy.packages.length })
  },
  async updateOrder({ after, action }) {
    const state = action === 'cancel' ? 'canceled' : action === 'pause' ? 'paused' : 'live'
    orders.set(after.media_buy_id, { state, packages: after.packages.length })
  },
}
