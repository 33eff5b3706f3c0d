/**
 * Keeps the caller's buys in step with its creatives and the clock: after creatives change (sync, review,
 * controller) or time passes, each live buy that depends on them gets its settled status and its creative
 * impairments recomputed, stored with compare-and-set, and the event seam told of every status change,
 * impairment raised and buy closed.
 */
import { creativesById } from '../creatives/lookup.js'
import type { Seller } from '../seller.js'
import { creativeImpairments, settledStatus } from './lifecycle.js'
import { BUY_KIND, mutateBuy } from './repository.js'
import { TERMINAL } from './state-machine.js'
import { effectiveAt, setStatus } from './status.js'
import type { MediaBuyRecord, MediaBuyStatus } from './types.js'

/** Settles one buy now; resolves with the stored buy and its revision. */
export async function settleBuy(
  seller: Seller,
  owner: string,
  mediaBuyId: string,
  cause: 'buyer' | 'seller' | 'controller' = 'seller',
): Promise<{ buy: MediaBuyRecord; revision: number }> {
  // The settled buy and every push announcing its change commit together.
  return seller.records.transaction(() => settleInTransaction(seller, owner, mediaBuyId, cause))
}

async function settleInTransaction(
  seller: Seller,
  owner: string,
  mediaBuyId: string,
  cause: 'buyer' | 'seller' | 'controller',
): Promise<{ buy: MediaBuyRecord; revision: number }> {
  let before: MediaBuyStatus | undefined
  let raised: Record<string, unknown>[] = []
  const { buy, revision } = await mutateBuy(seller.records, owner, mediaBuyId, async (current) => {
    before = current.status
    if (TERMINAL.has(current.status)) {
      raised = []
      return
    }
    const now = seller.now()
    const creatives = await creativesById(
      seller.records,
      owner,
      current.packages.flatMap((pkg) => pkg.creative_assignments.map((a) => a.creative_id)),
    )
    const next = settledStatus(current, creatives, now)
    const impairments = creativeImpairments(current, creatives, now)
    raised = impairments.raised
    current.impairments = impairments.impairments
    if (next !== current.status) setStatus(current, next, effectiveAt(current, next, now), 'seller')
  })
  await announce(seller, buy, before, cause, raised)
  return { buy, revision }
}

/** Tells the event seam what changed on a stored buy (inside the transaction that stored it). */
export async function announce(
  seller: Seller,
  buy: MediaBuyRecord,
  before: MediaBuyStatus | undefined,
  cause: 'buyer' | 'seller' | 'controller',
  raised: readonly Record<string, unknown>[] = [],
): Promise<void> {
  for (const impairment of raised)
    await seller.events.impairmentRaised({
      buy,
      impairment,
      resourceKey: `${String(impairment.resource_type)}:${String(impairment.resource_id)}`,
    })
  if (before !== buy.status) {
    await seller.events.buyStatusChanged({ buy, from: before, to: buy.status, cause })
    if (TERMINAL.has(buy.status)) await seller.events.buyClosed(buy)
  }
}

/** Settles every live buy of `owner` that assigns one of `creativeIds` (all live buys when omitted). */
export async function reconcileBuys(
  seller: Seller,
  owner: string,
  creativeIds?: ReadonlySet<string>,
): Promise<void> {
  const buys = await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner })
  for (const stored of buys) {
    if (TERMINAL.has(stored.body.status)) continue
    const uses = stored.body.packages.some((pkg) =>
      pkg.creative_assignments.some((a) => creativeIds === undefined || creativeIds.has(a.creative_id)),
    )
    if (creativeIds !== undefined && !uses) continue
    await settleBuy(seller, owner, stored.id)
  }
}
