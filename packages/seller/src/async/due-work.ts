/**
 * Work the seller owes at a time (a buy's review, a creative's review) as records of kind `due_work`, shared
 * by every instance and kept across restarts: the due tick (service.ts) takes each due item under a lease
 * claimed by compare-and-set, so exactly one instance runs it, and deletes it once done. An instance that
 * dies mid-item leaves the lease to expire; the next tick anywhere runs it again (each item resumes from its
 * stored state).
 */
import type { Seller } from '../seller.js'

export const DUE_KIND = 'due_work'
/** How long a claimed item belongs to the instance that claimed it, seconds. */
export const LEASE_SECONDS = 120

export type DueWorkType = 'buy_review' | 'creative_review'

export interface DueWork {
  readonly work: DueWorkType
  /** What the work is about: a task_id, a creative_id. */
  readonly ref: string
  readonly owner: string
  /** Unix seconds. */
  readonly due_at: number
  /** Unix seconds: until then the item belongs to the instance that claimed it. */
  lease_until?: number
}

/** Stores work due at `due_at` (replacing the same work's earlier entry). */
export async function scheduleWork(seller: Seller, work: DueWork): Promise<void> {
  await seller.records.put(DUE_KIND, `${work.work}:${work.ref}`, work.owner, work)
}

/**
 * Runs every due item no other instance holds, one at a time, through `run`; resolves with how many it ran.
 * A failed item keeps its record and is tried again once its lease expires.
 */
export async function runDueWork(seller: Seller, run: (work: DueWork) => Promise<void>): Promise<number> {
  let ran = 0
  let afterSeq = 0
  for (;;) {
    const page = await seller.records.listDue<DueWork>(DUE_KIND, seller.now(), { afterSeq, limit: 500 })
    if (page.length === 0) return ran
    afterSeq = page.at(-1)!.seq
    for (const stored of page) {
      const now = seller.now()
      if (stored.body.due_at > now || (stored.body.lease_until ?? 0) > now) continue
      const leased = { ...stored.body, lease_until: now + LEASE_SECONDS }
      if (!(await seller.records.update(DUE_KIND, stored.id, stored.revision, leased))) continue
      try {
        await run(stored.body)
        await seller.records.delete(DUE_KIND, stored.id)
        ran++
      } catch (error) {
        seller.log({ due_work: stored.id, failed: String(error) })
      }
    }
  }
}
