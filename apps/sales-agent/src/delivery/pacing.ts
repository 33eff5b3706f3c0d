/**
 * The simulated ad server's delivery (the reference seller's delivery model): each package plans budget ÷ price
 * impressions (per mille for CPM) spread evenly over the flight, and delivers for every second its buy served
 * (the buy's serving intervals), day by day with a deterministic jitter drawn from the seed, buy, package and day
 * (same seed, same delivery); clicks, video completions and viewability follow per-package rates from the same
 * seed. Spend never passes the package budget.
 */
import { createHash } from 'node:crypto'
import {
  dayOf,
  servedSeconds,
  type DayDelivery,
  type DeliveryModel,
  type PackagePricing,
  type PackageRecord,
} from '@adwire/seller'

const DAY = 86_400

/** A number in [0, 1) from the seed and the parts (stable across runs and instances). */
export function unit(seed: string, ...parts: (string | number)[]): number {
  const digest = createHash('sha256')
    .update([seed, ...parts].join('|'))
    .digest()
  return digest.readUInt32BE(0) / 2 ** 32
}

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

/**
 * The simulated delivery model of `seed`.
 *
 * @example
 * const model = pacedDelivery('adwire')
 * model(buy, buy.packages[0], { model: 'cpm', price: 8, video: false }, Date.now() / 1000)
 */
export const pacedDelivery =
  (seed: string): DeliveryModel =>
  (buy, pkg, pricing, now): DayDelivery[] => {
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
