/**
 * The seam every webhook hangs off: the domain calls one {@link SellerEvents} method on each state change it
 * makes (a media buy's status, a package's impairment, a creative's status or purge, a buy's end, an account's
 * status, new capabilities), after the change is stored. The implementation decides what to send and where:
 * the registrations it needs are on the records it is handed (`push_notification_config`, `reporting_webhook`
 * on the buy, `notification_configs` on the account, agent-level configs in storage).
 */
import type { AccountRecord } from '../accounts/types.js'
import type { CreativeRecord } from '../creatives/types.js'
import type { MediaBuyRecord, MediaBuyStatus } from '../media-buys/types.js'

/** A media buy changed status (also on creation: `from` undefined). */
export interface BuyStatusChange {
  readonly buy: MediaBuyRecord
  readonly from: MediaBuyStatus | undefined
  readonly to: MediaBuyStatus
  /** What caused it: a buyer task, the seller (review, flight dates, the clock) or the test controller. */
  readonly cause: 'buyer' | 'seller' | 'controller'
}

/** A package of a buy is impaired (or no longer is): the buy as stored, with its `impairments[]`. */
export interface ImpairmentChange {
  readonly buy: MediaBuyRecord
  readonly impairment: Record<string, unknown>
  /** The coalescing key: the resource that caused it (`creative:<id>`, `audience:<id>`). */
  readonly resourceKey: string
}

export interface SellerEvents {
  /** After a buy's status is stored. */
  buyStatusChanged(change: BuyStatusChange): Promise<void>
  /** After an impairment is recorded on a buy. */
  impairmentRaised(change: ImpairmentChange): Promise<void>
  /** After a buy reached a terminal status (completed, canceled, rejected): the final report goes now. */
  buyClosed(buy: MediaBuyRecord): Promise<void>
  /** After delivery moved for a buy (the clock or simulate_delivery): a scheduled report may be due. */
  deliveryAdvanced(buy: MediaBuyRecord): Promise<void>
  /** After a creative's review status changed (sync_creatives, the reviewer, the controller). */
  creativeStatusChanged(creative: CreativeRecord, from: string | undefined): Promise<void>
  /** After a creative was purged (soft: tombstone kept; hard: gone). */
  creativePurged(creative: CreativeRecord, kind: 'soft' | 'hard'): Promise<void>
  /** After an account's status changed. */
  accountStatusChanged(account: AccountRecord, from: string | undefined): Promise<void>
  /** After a new capability snapshot is readable through get_adcp_capabilities. */
  capabilitiesChanged(capabilitiesVersion: string): Promise<void>
  /**
   * get_media_buys `include_webhook_activity`: the buy's recent fires on its persistent channels (delivery
   * reports, impairments), one `core/webhook-activity-record.json` row per attempt, newest first, only those
   * made for `principalId` (the caller).
   */
  webhookActivity(
    buy: MediaBuyRecord,
    principalId: string,
    limit?: number,
  ): Promise<Record<string, unknown>[]>
  /**
   * get_task_status: every attempt to push a task's statuses to its registrations' destinations (newest first):
   * a lost task webhook leaves a trace the buyer can read.
   */
  taskPushActivity(destinations: readonly string[], limit?: number): Promise<Record<string, unknown>[]>
}

/** One recorded event (what {@link recordingEvents} keeps). */
export type SellerEvent = {
  readonly kind: Exclude<keyof SellerEvents, 'webhookActivity' | 'taskPushActivity'>
  readonly summary: Record<string, unknown>
}

/**
 * The implementation used until webhook emission lands: every event goes to the log and to `recorded` (tests
 * read it), nothing is sent.
 */
export function recordingEvents(log: (entry: Record<string, unknown>) => void): SellerEvents & {
  readonly recorded: SellerEvent[]
} {
  const recorded: SellerEvent[] = []
  const note = async (kind: SellerEvent['kind'], summary: Record<string, unknown>) => {
    recorded.push({ kind, summary })
    log({ event: kind, ...summary })
  }
  return {
    recorded,
    buyStatusChanged: (change) =>
      note('buyStatusChanged', {
        media_buy_id: change.buy.media_buy_id,
        from: change.from,
        to: change.to,
        cause: change.cause,
      }),
    impairmentRaised: (change) =>
      note('impairmentRaised', { media_buy_id: change.buy.media_buy_id, resource: change.resourceKey }),
    buyClosed: (buy) => note('buyClosed', { media_buy_id: buy.media_buy_id, status: buy.status }),
    deliveryAdvanced: async () => {},
    creativeStatusChanged: (creative, from) =>
      note('creativeStatusChanged', { creative_id: creative.creative_id, from, to: creative.status }),
    creativePurged: (creative, kind) => note('creativePurged', { creative_id: creative.creative_id, kind }),
    accountStatusChanged: (account, from) =>
      note('accountStatusChanged', { account_id: account.account_id, from, to: account.status }),
    capabilitiesChanged: (version) => note('capabilitiesChanged', { capabilities_version: version }),
    webhookActivity: async () => [],
    taskPushActivity: async () => [],
  }
}
