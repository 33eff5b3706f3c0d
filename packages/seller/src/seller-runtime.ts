/**
 * The seller's domain assembled (records, catalog, event seam, clock) and the clock's tick: every tick settles
 * each live buy (flight start and end cross without anyone reading) and tells the event seam that delivery
 * moved for the active ones, which is where scheduled delivery reports are decided.
 */
import type { TestKitCredential } from './auth/test-kits.js'
import { productSource } from './catalog/product-source.js'
import type { CatalogProduct } from './catalog/types.js'
import type { DeliveryModel } from './delivery/simulate.js'
import type { SellerSettings } from './settings.js'
import type { SellerEvents } from './events/seller-events.js'
import { settleBuy } from './media-buys/reconcile.js'
import { BUY_KIND } from './media-buys/repository.js'
import { TERMINAL } from './media-buys/state-machine.js'
import type { MediaBuyRecord } from './media-buys/types.js'
import type { SellerPlatform } from './platform.js'
import type { Seller } from './seller.js'
import type { Storage } from './storage/index.js'

export interface SellerParts {
  readonly env: SellerSettings
  /** The products the seller's ad server sells (its adapter's catalog). */
  readonly catalog: readonly CatalogProduct[]
  /** How the seller's ad server delivers (the adapter's delivery data). */
  readonly delivery: DeliveryModel
  /** The ad server's booking and creative review (default: none, the seller's records are the order book). */
  readonly platform?: SellerPlatform
  readonly storage: Storage
  readonly events: SellerEvents
  readonly kits: readonly TestKitCredential[]
  readonly now: () => number
  readonly background: (work: () => Promise<void>) => void
  readonly log: (entry: Record<string, unknown>) => void
  readonly resumeUpdates: Seller['resumeUpdates']
  /** The idempotency replay window, seconds (default 86,400). */
  readonly replayTtlSeconds?: number
}

/** The seller over its parts. */
export function createSeller(parts: SellerParts): Seller {
  return {
    records: parts.storage.records,
    products: productSource(parts.storage.records, parts.env.creativeAgentUrl, parts.catalog),
    events: parts.events,
    env: parts.env,
    delivery: parts.delivery,
    platform: parts.platform ?? {},
    kits: parts.kits,
    now: parts.now,
    background: parts.background,
    log: parts.log,
    resumeUpdates: parts.resumeUpdates,
    ...(parts.replayTtlSeconds !== undefined ? { replayTtlSeconds: parts.replayTtlSeconds } : {}),
  }
}

/**
 * One tick of the seller's clock over every live buy (all callers); resolves with how many it settled.
 *
 * @example
 * setInterval(() => void tickBuys(seller), 30_000)
 */
export async function tickBuys(seller: Seller): Promise<number> {
  let settled = 0
  let afterSeq = 0
  for (;;) {
    // Terminal buys have no due time: the tick reads the live ones only.
    const page = await seller.records.listDue<MediaBuyRecord>(BUY_KIND, seller.now(), {
      afterSeq,
      limit: 500,
    })
    if (page.length === 0) return settled
    afterSeq = page.at(-1)!.seq
    for (const stored of page) {
      if (TERMINAL.has(stored.body.status)) continue
      const { buy } = await settleBuy(seller, stored.owner, stored.id)
      settled++
      if (buy.status === 'active') await seller.events.deliveryAdvanced(buy)
    }
  }
}
