/**
 * Delivery, simulated from the seller's clock: each package plans budget ÷ price impressions (per mille for
 * CPM) spread evenly over the flight, and delivers for every second its buy served (the buy's serving
 * intervals), day by day with a deterministic jitter drawn from the seed, buy, package and day (same seed,
 * same delivery); clicks, video completions and viewability follow per-package rates from the same seed. Spend
 * never passes the package budget. What the test controller adds (simulate_delivery, simulate_budget_spend)
 * counts from the instant it is attributed to (a buy stored before the log: the current day).
 */
import { createHash } from 'node:crypto'
import type { MediaBuyRecord, PackageRecord } from '../media-buys/types.js'

const DAY = 86_400

/** A number in [0, 1) from the seed and the parts (stable across runs and instances). */
export function unit(seed: string, ...parts: (string | number)[]): number {
  const digest = createHash('sha256')
    .update([seed, ...parts].join('|'))
    .digest()
  return digest.readUInt32BE(0) / 2 ** 32
}

/** What the simulation needs to know of a package's pricing and product. */
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

const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

/** The package's planned units over the whole flight (impressions). */
function plannedImpressions(pkg: PackageRecord, pricing: PackagePricing): number {
  if (pricing.model === 'cpcv') return pkg.budget / pricing.price / 0.72
  if (pricing.model === 'flat_rate') return pkg.impressions ?? pkg.budget * 80
  return (pkg.budget / pricing.price) * 1000
}

function spendOf(
  impressions: number,
  completedViews: number,
  pricing: PackagePricing,
  pkg: PackagePricing & { budget: number; planned: number },
): number {
  if (pricing.model === 'cpcv') return completedViews * pricing.price
  if (pricing.model === 'flat_rate') return (impressions / pkg.planned) * pkg.budget
  return (impressions / 1000) * pricing.price
}

/** The package's delivery per day from the buy's first serving day to `now` (days with nothing left out). */
export function packageDays(
  seed: string,
  buy: MediaBuyRecord,
  pkg: PackageRecord,
  pricing: PackagePricing,
  now: number,
): DayDelivery[] {
  const first = buy.serving[0]?.[0]
  if (first === undefined || pkg.canceled) return []
  const flightSeconds = Math.max(1, (Date.parse(buy.end_time) - Date.parse(buy.start_time)) / 1000)
  const planned = plannedImpressions(pkg, pricing)
  const perSecond = planned / flightSeconds
  const ctr = 0.001 + 0.003 * unit(seed, buy.media_buy_id, pkg.package_id, 'ctr')
  const viewableRate = 0.55 + 0.2 * unit(seed, buy.media_buy_id, pkg.package_id, 'view')
  const days: DayDelivery[] = []
  let spent = 0
  for (let day = Math.floor(first / DAY) * DAY; day < now; day += DAY) {
    const served = servedSeconds(buy, day, day + DAY, now)
    if (served <= 0) continue
    const jitter = 0.85 + 0.3 * unit(seed, buy.media_buy_id, pkg.package_id, day)
    let impressions = Math.floor(perSecond * served * jitter)
    const completed = pricing.video ? Math.floor(impressions * 0.72) : 0
    let spend = spendOf(impressions, completed, pricing, { ...pricing, budget: pkg.budget, planned })
    if (spent + spend > pkg.budget) {
      const share = spend > 0 ? (pkg.budget - spent) / spend : 0
      impressions = Math.floor(impressions * share)
      spend = pkg.budget - spent
    }
    spent += spend
    const measurable = Math.floor(impressions * 0.92)
    days.push({
      date: dayOf(day),
      impressions,
      spend: Math.round(spend * 100) / 100,
      clicks: Math.floor(impressions * ctr),
      completed_views: pricing.video ? Math.floor(impressions * 0.72) : 0,
      measurable,
      viewable: Math.floor(measurable * viewableRate),
    })
    if (spent >= pkg.budget) break
  }
  return days
}

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
