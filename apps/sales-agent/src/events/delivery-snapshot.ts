/**
 * What a delivery report says about a buy over a period: a {@link DeliverySource} gives the cumulative
 * delivery at an instant (the seller's delivery clock, injected by the core), and the report's rows are the
 * difference between the period's end and start, per package and in total, as
 * `media-buy/media-buy-delivery-webhook-result.json` rows.
 */
import type { MediaBuyRecord } from '../media-buys/types.js'

/** Cumulative delivery of one package (or a whole buy) at an instant. */
export interface DeliveryMetrics {
  readonly impressions: number
  readonly spend: number
  readonly clicks: number
}

/** Cumulative delivery of a buy at `at` (Unix seconds), per package id. */
export type DeliverySource = (buy: MediaBuyRecord, at: number) => ReadonlyMap<string, DeliveryMetrics>

const CPM = 12
const CTR = 0.002
const seconds = (iso: string) => Date.parse(iso) / 1000

/**
 * The default source, until the seller's delivery clock is given: even pacing over the flight (nothing before
 * the start, the whole budget at the end, nothing more once paused or ended; a canceled or rejected buy stops
 * at its last update), at a flat CPM and CTR, plus what simulate_delivery added (spread by budget).
 */
export const evenPacing: DeliverySource = (buy, at) => {
  const start = seconds(buy.start_time)
  const end = seconds(buy.end_time)
  const stoppedAt = ['canceled', 'rejected', 'paused', 'pending_creatives'].includes(buy.status)
    ? Math.min(at, seconds(buy.updated_at))
    : at
  const live = buy.status === 'pending_creatives' || buy.status === 'rejected' ? 0 : 1
  const fraction = end > start ? Math.min(1, Math.max(0, (stoppedAt - start) / (end - start))) : 1
  const budget = buy.packages.reduce((sum, pkg) => sum + (pkg.canceled ? 0 : pkg.budget), 0) || 1
  const metrics = new Map<string, DeliveryMetrics>()
  for (const pkg of buy.packages) {
    const share = pkg.budget / budget
    const spend = pkg.budget * fraction * live + (buy.simulated?.spend ?? 0) * share
    const impressions =
      Math.round((pkg.budget * fraction * live * 1000) / CPM) +
      Math.round((buy.simulated?.impressions ?? 0) * share)
    metrics.set(pkg.package_id, {
      impressions,
      spend: Math.round(spend * 100) / 100,
      clicks: Math.round(impressions * CTR) + Math.round((buy.simulated?.clicks ?? 0) * share),
    })
  }
  return metrics
}

const round2 = (value: number) => Math.round(value * 100) / 100
const minus = (a: DeliveryMetrics | undefined, b: DeliveryMetrics | undefined): DeliveryMetrics => ({
  impressions: Math.max(0, (a?.impressions ?? 0) - (b?.impressions ?? 0)),
  spend: round2(Math.max(0, (a?.spend ?? 0) - (b?.spend ?? 0))),
  clicks: Math.max(0, (a?.clicks ?? 0) - (b?.clicks ?? 0)),
})

/** One `media_buy_deliveries[]` row: delivery over [from, to] (cumulative from the start when `from` is undefined). */
export function deliveryRow(
  source: DeliverySource,
  buy: MediaBuyRecord,
  from: number | undefined,
  to: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const end = source(buy, to)
  const start = from === undefined ? new Map<string, DeliveryMetrics>() : source(buy, from)
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
