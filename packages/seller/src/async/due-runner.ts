/** The seller's due work, by type: what the due tick (service.ts) runs. */
import { finishCreativeReview } from '../creatives/library.js'
import { finishBuyReview } from '../media-buys/create.js'
import type { Seller } from '../seller.js'
import { runDueWork } from './due-work.js'

/**
 * One due tick: every review that is due and unclaimed is finished here; resolves with how many.
 *
 * @example
 * setInterval(() => void tickDueWork(seller), 1000)
 */
export function tickDueWork(seller: Seller): Promise<number> {
  return runDueWork(seller, async (work) => {
    if (work.work === 'buy_review') await finishBuyReview(seller, work.ref)
    else await finishCreativeReview(seller, work.owner, work.ref)
  })
}
