/**
 * The one place a buy's status is set: it records the history entry and keeps the serving intervals the
 * delivery simulation paces on (a buy serves while active: an interval opens when it becomes active and closes
 * when it leaves). `at` is when the change took effect on the seller's clock (the flight start or end when the
 * clock crossed it before anyone looked).
 */
import { isoAt } from '../seller.js'
import type { MediaBuyRecord, MediaBuyStatus } from './types.js'

/** Sets `to` as of `at` (Unix seconds); a no-op when the buy already has it. */
export function setStatus(
  buy: MediaBuyRecord,
  to: MediaBuyStatus,
  at: number,
  actor: string,
  note?: string,
): void {
  if (buy.status === to && buy.history.length > 0) return
  const open = buy.serving.at(-1)
  if (open && open[1] === null && to !== 'active') open[1] = Math.max(open[0], at)
  if (to === 'active' && !(open && open[1] === null)) buy.serving.push([at, null])
  buy.status = to
  buy.updated_at = isoAt(Math.max(at, Date.parse(buy.created_at) / 1000))
  buy.history.push({ at: isoAt(at), status: to, actor, ...(note ? { note } : {}) })
}

/** When a settled change took effect: the flight start for pending_start → active, its end for completion. */
export function effectiveAt(buy: MediaBuyRecord, to: MediaBuyStatus, now: number): number {
  const start = Date.parse(buy.start_time) / 1000
  const end = Date.parse(buy.end_time) / 1000
  if (to === 'completed') return Math.min(now, end)
  if (to === 'active' && buy.status === 'pending_start') return Math.min(now, start)
  return now
}
