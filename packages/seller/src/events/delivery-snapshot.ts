/**
 * What a delivery report says about a buy over a period: a {@link DeliverySource} gives the cumulative
 * delivery at an instant (the seller's delivery clock), and the report's rows are the
 * difference between the period's end and start, per package and in total, as
 * `media-buy/media-buy-delivery-webhook-result.json` rows.
 */
import type { ProductSource } from '../catalog/product-source.js'
import { buyDelivery, pricingOf } from '../delivery/report.js'
import type { DeliveryModel } from '../delivery/simulate.js'
import type { MediaBuyRecord } from '../media-buys/types.js'

/** Cumulative delivery of one package (or a whole buy) at an instant. */
export interface DeliveryMetrics {
  readonly impressions: number
  readonly spend: number
  readonly clicks: number
}

/** Cumulative delivery of a buy at `at` (Unix seconds), per package id. */
export type DeliverySource = (
  buy: MediaBuyRecord,
  at: number,
) => Promise<ReadonlyMap<string, DeliveryMetrics>>

/**
 * The seller's delivery clock as a {@link DeliverySource}: the same simulation get_media_buy_delivery reads
 * (serving intervals, pacing, deterministic per seed, plus what simulate_delivery added), so a report and a
 * pull of the same window agree.
 */
export function simulatedDelivery(products: ProductSource, model: DeliveryModel): DeliverySource {
  return async (buy, at) => {
    const row = buyDelivery(buy, await pricingOf(products, buy), { model, now: at })
    const metrics = new Map<string, DeliveryMetrics>()
    for (const pkg of row.by_package as Record<string, unknown>[])
      metrics.set(String(pkg.package_id), {
        impressions: Number(pkg.impressions ?? 0),
        spend: Number(pkg.spend ?? 0),
        clicks: Number(pkg.clicks ?? 0),
      })
    return metrics
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100
const minus = (a: DeliveryMetrics | undefined, b: DeliveryMetrics | undefined): DeliveryMetrics => ({
  impressions: Math.max(0, (a?.impressions ?? 0) - (b?.impressions ?? 0)),
  spend: round2(Math.max(0, (a?.spend ?? 0) - (b?.spend ?? 0))),
  clicks: Math.max(0, (a?.clicks ?? 0) - (b?.clicks ?? 0)),
})

/** One `media_buy_deliveries[]` row: delivery over [from, to] (cumulative from the start when `from` is undefined). */
export async function deliveryRow(
  source: DeliverySource,
  buy: MediaBuyRecord,
  from: number | undefined,
  to: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const end = await source(buy, to)
  const start = from === undefined ? new Map<string, DeliveryMetrics>() : await source(buy, from)
  const byPackage = buy.packages.map((pkg) => ({
    package_id: pkg.package_id,
    ...minus(end.get(pkg.package_id), start.get(pkg.package_id)),
    currency: buy.currency,
    paused: pkg.paused,
  }))
  const totals = byPackage.reduce(
    (sum, row) => ({
      impressions: sum.impressions + row.impressions,
      spend: round2(sum.spend + row.spend),
      clicks: sum.clicks + row.clicks,
    }),
    { impressions: 0, spend: 0, clicks: 0 },
  )
  return { media_buy_id: buy.media_buy_id, status: buy.status, totals, by_package: byPackage, ...extra }
}
