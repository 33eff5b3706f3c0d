/**
 * One buy's delivery as the official `media_buy_deliveries[]` entry (get-media-buy-delivery-response.json, also
 * the shape of a reporting webhook's result): totals with viewability, per-package rows with pacing, optional
 * daily breakdowns and per-day windows, all over an optional date range. The seam the delivery-report
 * webhooks build their `scheduled` and `final` results from.
 */
import { buySandbox, type ProductSource } from '../catalog/product-source.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import { withSimulated, type DayDelivery, type DeliveryModel, type PackagePricing } from './simulate.js'

export interface ReportOptions {
  /** The ad server's delivery (the seller's adapter). */
  readonly model: DeliveryModel
  /** Unix seconds. */
  readonly now: number
  /** Inclusive YYYY-MM-DD bounds. */
  readonly startDate?: string
  readonly endDate?: string
  readonly packageDaily?: boolean
  /** Per-day windows (time_granularity daily with include_window_breakdown). */
  readonly windows?: boolean
}

const sum = (days: readonly DayDelivery[], key: keyof Omit<DayDelivery, 'date'>) =>
  days.reduce((total, day) => total + day[key], 0)
/** Average in-view seconds per measurable impression (the simulation's constant). */
const VIEWED_SECONDS = 7.5
const round = (value: number) => Math.round(value * 100) / 100

/** Delivery metrics (core/delivery-metrics.json) of some days. */
export function metrics(days: readonly DayDelivery[], video: boolean): Record<string, unknown> {
  const impressions = sum(days, 'impressions')
  const clicks = sum(days, 'clicks')
  const measurable = sum(days, 'measurable')
  const viewable = sum(days, 'viewable')
  const completed = sum(days, 'completed_views')
  return {
    impressions,
    spend: round(sum(days, 'spend')),
    clicks,
    ...(impressions > 0 ? { ctr: clicks / impressions } : {}),
    // The effective cost per click (spend / clicks), once there is a click to divide by.
    ...(clicks > 0 ? { cost_per_click: round(sum(days, 'spend') / clicks) } : {}),
    ...(video
      ? {
          views: impressions,
          completed_views: completed,
          ...(impressions > 0 ? { completion_rate: completed / impressions } : {}),
        }
      : {}),
    viewability: {
      standard: 'mrc',
      measurable_impressions: measurable,
      viewable_impressions: viewable,
      ...(measurable > 0 ? { viewable_rate: viewable / measurable, viewed_seconds: VIEWED_SECONDS } : {}),
    },
  }
}

/** The pricing of every package of a buy, from the catalog. */
export async function pricingOf(
  products: ProductSource,
  buy: MediaBuyRecord,
): Promise<Map<string, PackagePricing>> {
  const found = new Map<string, PackagePricing>()
  for (const pkg of buy.packages) {
    const product = (await products.get(pkg.product_id, buySandbox(buy)))?.product
    const options = (product?.pricing_options as Record<string, unknown>[] | undefined) ?? []
    const option = options.find((candidate) => candidate.pricing_option_id === pkg.pricing_option_id) ?? {}
    const price = Number(option.fixed_price ?? pkg.bid_price ?? option.floor_price ?? 10)
    const channels = (product?.channels as string[] | undefined) ?? []
    found.set(pkg.package_id, {
      model: String(option.pricing_model ?? 'cpm'),
      price: price > 0 ? price : 10,
      video: channels.some((channel) => channel === 'olv' || channel === 'ctv'),
    })
  }
  return found
}

const inRange = (options: ReportOptions) => (day: DayDelivery) =>
  (!options.startDate || day.date >= options.startDate) && (!options.endDate || day.date <= options.endDate)

/**
 * @example
 * buyDelivery(buy, await pricingOf(products, buy), { model: seller.delivery, now: Date.now() / 1000 })
 */
export function buyDelivery(
  buy: MediaBuyRecord,
  pricing: ReadonlyMap<string, PackagePricing>,
  options: ReportOptions,
): Record<string, unknown> {
  const live = buy.packages.length || 1
  const perPackage = buy.packages.map((pkg) => {
    const price = pricing.get(pkg.package_id) ?? { model: 'cpm', price: 10, video: false }
    const days = withSimulated(
      options.model(buy, pkg, price, options.now),
      buy.simulated_log ?? (buy.simulated ? [buy.simulated] : []),
      options.now,
      1 / live,
    ).filter(inRange(options))
    return { pkg, price, days }
  })
  const allDays = perPackage.flatMap((entry) => entry.days)
  const video = perPackage.some((entry) => entry.price.video)
  const flightShare = (() => {
    const start = Date.parse(buy.start_time) / 1000
    const end = Date.parse(buy.end_time) / 1000
    return Math.min(1, Math.max(0, (options.now - start) / Math.max(1, end - start)))
  })()
  const byDate = new Map<string, DayDelivery[]>()
  for (const day of allDays) byDate.set(day.date, [...(byDate.get(day.date) ?? []), day])
  const dates = [...byDate.keys()].sort()
  const models = new Set(perPackage.map((entry) => entry.price.model))
  return {
    media_buy_id: buy.media_buy_id,
    status: buy.status,
    ...(models.size === 1 ? { pricing_model: [...models][0] } : {}),
    totals: metrics(allDays, video),
    by_package: perPackage.map(({ pkg, price, days }) => {
      const spend = sum(days, 'spend')
      return {
        package_id: pkg.package_id,
        ...metrics(days, price.video),
        pricing_model: price.model,
        rate: price.price,
        currency: buy.currency,
        pacing_index: flightShare > 0 ? round(spend / (pkg.budget * flightShare)) : 0,
        delivery_status:
          buy.status === 'completed' ? 'completed' : spend >= pkg.budget ? 'budget_exhausted' : 'delivering',
        paused: pkg.paused || buy.status === 'paused',
        ...(options.packageDaily
          ? {
              daily_breakdown: days.map((day) => ({
                date: day.date,
                impressions: day.impressions,
                spend: day.spend,
              })),
            }
          : {}),
      }
    }),
    daily_breakdown: dates.map((date) => {
      const rows = byDate.get(date)!
      return { date, impressions: sum(rows, 'impressions'), spend: round(sum(rows, 'spend')) }
    }),
    ...(options.windows
      ? {
          windows: dates.map((date) => ({
            window_start: `${date}T00:00:00Z`,
            window_end: new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000)
              .toISOString()
              .replace('.000Z', 'Z'),
            totals: metrics(byDate.get(date)!, video),
          })),
        }
      : {}),
  }
}
