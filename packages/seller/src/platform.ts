/**
 * What a seller's ad server does beyond its catalog and delivery data: booking the buys the seller accepts,
 * applying a buyer's changes to them, and reviewing creatives. Each method may be async and slow (a real ad
 * server over the network): the seller calls it before it opens the database transaction that stores the
 * outcome and its pushes, never inside one. Throw an `AgentError` (`TERMS_REJECTED`, `PRODUCT_UNAVAILABLE`,
 * `INVALID_STATE`, ...) to refuse with that AdCP error; any other failure is answered `SERVICE_UNAVAILABLE`
 * (transient) and nothing is stored.
 */
import { AgentError } from '@adwire/agent-server'
import type { AccountRecord } from './accounts/types.js'
import type { CreativeRecord } from './creatives/types.js'
import type { MediaBuyRecord } from './media-buys/types.js'

/** What the buyer's update_media_buy does to a stored buy. */
export type OrderAction = 'update' | 'pause' | 'resume' | 'cancel'

/** A creative review's outcome. */
export interface CreativeVerdict {
  readonly status: 'approved' | 'rejected'
  /** Shown to the buyer as the rejection reason. */
  readonly reason?: string
}

/** `enums/account-status.json`. */
export type AccountStatus =
  'active' | 'pending_approval' | 'rejected' | 'payment_required' | 'suspended' | 'closed'

export interface SellerPlatform {
  /**
   * Opens or updates a buyer's account in the ad server (sync_accounts, not a dry run, something changed): the
   * account as it will be stored. Resolve with the status the ad server gives it (default: as it is, `active`
   * for a new one); throw an AgentError to fail that account alone (`action: failed`, its error listed).
   */
  provisionAccount?(
    account: AccountRecord,
    action: 'created' | 'updated',
  ): Promise<{ readonly status?: AccountStatus } | void>
  /**
   * Books a buy the seller is about to store (create_media_buy, or a seller review that approves it). Called
   * again for the same `media_buy_id` when the process died before the buy was stored: book once per id.
   */
  createOrder?(buy: MediaBuyRecord): Promise<void>
  /**
   * Applies a buyer's change (update_media_buy): the buy as stored and as it will be stored. The change is
   * stored when this resolves, unless the buy changed meanwhile (the buyer is answered CONFLICT and retries).
   */
  updateOrder?(change: {
    readonly before: MediaBuyRecord
    readonly after: MediaBuyRecord
    readonly action: OrderAction
  }): Promise<void>
  /** Reviews a creative in manual review mode when its review is due (default: approved). */
  reviewCreative?(creative: CreativeRecord): Promise<CreativeVerdict>
}

/**
 * Calls the ad server: an AgentError it throws reaches the buyer; any other failure becomes a transient
 * SERVICE_UNAVAILABLE, with the cause logged.
 */
export async function callPlatform<T>(
  what: string,
  call: () => Promise<T>,
  log: (entry: Record<string, unknown>) => void,
): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof AgentError) throw error
    log({ event: 'platform_error', call: what, error: String(error) })
    throw new AgentError('SERVICE_UNAVAILABLE', `the ad server could not ${what}; try again`, {
      status: 503,
      recovery: 'transient',
    })
  }
}
