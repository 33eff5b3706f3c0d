/**
 * Delivery data: the seller's ad server reports each package's counts per day (a {@link DeliveryModel}, the
 * adapter's part), over the seconds the buy served (its serving intervals on the seller's clock); what the test
 * controller adds (simulate_delivery, simulate_budget_spend) counts from the instant it is attributed to (a buy
 * stored before the log: the current day). Reports are built from both.
 */
import type { MediaBuyRecord, PackageRecord } from '../media-buys/types.js'

/** What a delivery model needs to know of a package's pricing and product. */
export interface PackagePricing {
  readonly model: string
  /** Price per unit of the model (per mille for CPM). */
  readonly price: number
  /** The product serves video (completions are reported). */
  readonly video: boolean
}

/** One package's delivery on one UTC day. */
export interface DayDelivery {
  readonly date: string
  impressions: number
  spend: number
  clicks: number
  completed_views: number
  measurable: number
  viewable: number
}

/** Seconds the buy served within [from, to). */
export function servedSeconds(buy: MediaBuyRecord, from: number, to: number, now: number): number {
  const flightEnd = Date.parse(buy.end_time) / 1000
  let total = 0
  for (const [start, end] of buy.serving) {
    const a = Math.max(start, from)
    const b = Math.min(end ?? now, to, flightEnd, now)
    if (b > a) total += b - a
  }
  return total
}

/** The UTC day (YYYY-MM-DD) of an instant, Unix seconds. */
export const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

/**
 * How the seller's ad server delivered a package: its counts per UTC day from the buy's first serving day to
 * `now`, days with nothing left out, spend never above the package budget. The adapter's delivery data.
 *
 * @example
 * const model: DeliveryModel = (buy, pkg, pricing, now) => adServer.dailyCounts(buy.media_buy_id, pkg.package_id, now)
 */
export type DeliveryModel = (
  buy: MediaBuyRecord,
  pkg: PackageRecord,
  pricing: PackagePricing,
  now: number,
) => DayDelivery[]

/** Delivery the controller added, counted at an instant (`at` undefined: the evaluation instant). */
export interface SimulatedDelivery {
  readonly at?: number
  readonly impressions: number
  readonly clicks: number
  readonly spend: number
}

/**
 * Adds the controller's simulated delivery counted by `now` to the rows of the days it counts on (made when
 * missing; rows stay in date order).
 */
export function withSimulated(
  days: DayDelivery[],
  entries: readonly SimulatedDelivery[],
  now: number,
  share: number,
): DayDelivery[] {
  for (const extra of entries) {
    const at = extra.at ?? now
    if (at > now || (extra.impressions === 0 && extra.spend === 0 && extra.clicks === 0)) continue
    const date = dayOf(at)
    let row = days.find((day) => day.date === date)
    if (!row) {
      row = { date, impressions: 0, spend: 0, clicks: 0, completed_views: 0, measurable: 0, viewable: 0 }
      days.push(row)
      days.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
    }
    row.impressions += Math.round(extra.impressions * share)
    row.clicks += Math.round(extra.clicks * share)
    row.spend = Math.round((row.spend + extra.spend * share) * 100) / 100
    row.measurable += Math.floor(extra.impressions * share * 0.92)
    row.viewable += Math.floor(extra.impressions * share * 0.6)
  }
  return days
}
