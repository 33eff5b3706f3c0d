/**
 * Where a buy's status goes on its own: out of pending_creatives once every live package has an approved
 * creative, pending_start → active at the flight start (paused if the buyer held it), active or paused →
 * completed at the flight end, all on the seller's clock. Also the impairments a buy carries because of its
 * creatives: an assigned creative that is rejected, archived or purged impairs the packages using it.
 */
import type { CreativeRecord } from '../creatives/types.js'
import { isoAt } from '../seller.js'
import { TERMINAL } from './state-machine.js'
import type { MediaBuyRecord, MediaBuyStatus } from './types.js'

const seconds = (iso: string) => Date.parse(iso) / 1000

/** Whether every live package has at least one assigned creative that is approved. */
export function creativesReady(buy: MediaBuyRecord, creatives: ReadonlyMap<string, CreativeRecord>): boolean {
  const live = buy.packages.filter((pkg) => !pkg.canceled)
  return (
    live.length > 0 &&
    live.every((pkg) =>
      pkg.creative_assignments.some((assignment) => {
        const creative = creatives.get(assignment.creative_id)
        return creative !== undefined && creative.status === 'approved' && !creative.purged_at
      }),
    )
  )
}

/** The status the clock and the creatives put the buy in now (the same status when nothing moves it). */
export function settledStatus(
  buy: MediaBuyRecord,
  creatives: ReadonlyMap<string, CreativeRecord>,
  now: number,
): MediaBuyStatus {
  const status = buy.status
  if (TERMINAL.has(status)) return status
  if (now >= seconds(buy.end_time))
    return status === 'pending_creatives' || status === 'pending_start' ? status : 'completed'
  if (status === 'pending_creatives' && !creativesReady(buy, creatives)) return status
  if (status === 'pending_creatives' || status === 'pending_start') {
    if (now < seconds(buy.start_time)) return 'pending_start'
    return buy.buyer_paused ? 'paused' : 'active'
  }
  return status
}

/** A creative state that stops delivery: its impairment reason code and offline state (impairment.json). */
const OFFLINE: Readonly<Record<string, string>> = {
  rejected: 'content_rejected',
  suspended: 'policy_violation',
  archived: 'seller_removed',
  purged: 'seller_removed',
}
const OFFLINE_STATE: Readonly<Record<string, string>> = {
  rejected: 'rejected',
  suspended: 'suspended',
  archived: 'withdrawn',
  purged: 'withdrawn',
}

/**
 * The buy's impairments recomputed from its creatives: one per offline assigned creative (listing the packages
 * that use it), kept with its id and observed_at while it lasts; impairments of other resources are kept.
 * Returns the new list and those that are new.
 */
export function creativeImpairments(
  buy: MediaBuyRecord,
  creatives: ReadonlyMap<string, CreativeRecord>,
  now: number,
): { impairments: Record<string, unknown>[]; raised: Record<string, unknown>[] } {
  const others = buy.impairments.filter((impairment) => impairment.resource_type !== 'creative')
  const previous = new Map(
    buy.impairments
      .filter((impairment) => impairment.resource_type === 'creative')
      .map((impairment) => [impairment.resource_id as string, impairment]),
  )
  const byCreative = new Map<string, string[]>()
  for (const pkg of buy.packages) {
    if (pkg.canceled) continue
    for (const { creative_id } of pkg.creative_assignments) {
      const creative = creatives.get(creative_id)
      const state = creative?.purged_at ? 'purged' : creative?.status
      if (!creative || !state || !(state in OFFLINE)) continue
      byCreative.set(creative_id, [...(byCreative.get(creative_id) ?? []), pkg.package_id])
    }
  }
  const impairments: Record<string, unknown>[] = [...others]
  const raised: Record<string, unknown>[] = []
  for (const [creativeId, packageIds] of byCreative) {
    const creative = creatives.get(creativeId)!
    const state = creative.purged_at ? 'purged' : creative.status
    const kept = previous.get(creativeId)
    const impairment = {
      impairment_id: (kept?.impairment_id as string | undefined) ?? `imp_${buy.media_buy_id}_${creativeId}`,
      resource_type: 'creative',
      resource_id: creativeId,
      package_ids: [...new Set(packageIds)],
      transition: { from: 'approved', to: OFFLINE_STATE[state]! },
      reason_code: OFFLINE[state]!,
      ...(creative.rejection_reason ? { reason: creative.rejection_reason.slice(0, 500) } : {}),
      observed_at: (kept?.observed_at as string | undefined) ?? isoAt(now),
      remediation: 'Assign another approved creative to the package, or sync a corrected creative.',
    }
    impairments.push(impairment)
    if (!kept) raised.push(impairment)
  }
  return { impairments, raised }
}
