/**
 * The real {@link SellerEvents}: every event the domain reports becomes webhooks through the durable outbox
 * of the @adwire/webhooks sender.
 * - A buy with a `reporting_webhook` gets a report schedule when it is stored; scheduled reports go when due
 *   (on `deliveryAdvanced` and on the app's periodic {@link WebhookEvents.tick}), `delayed` instead when the
 *   data is not ready, `adjusted` when late data restated the last reported window, `window_update` as its
 *   measurement windows mature (also to a push_notification_config without reporting_webhook); the `final`
 *   report when the buy closes, after its queued impairments, and nothing after it.
 * - Impairments go to the buy's `push_notification_config`, coalesced per resource (5 minutes in general,
 *   none for the latency-sensitive reasons).
 * - Creative status changes and purges go to the account's `notification_configs[]`, capabilities.changed to
 *   the agent-level configs.
 * Task status webhooks are the task server's (`context.updates`), not this seam's.
 */
import type { WebhookSender } from '@adwire/webhooks'
import { WebhookError } from '@adwire/webhooks'
import type { MediaBuyRecord } from '../media-buys/types.js'
import type { Storage } from '../storage/types.js'
import { ACCOUNT_STATUS_CHANGED, allAgentConfigs, CAPABILITIES_CHANGED } from './agent-configs.js'
import { AGENT_CONFIGS_KIND, type AgentConfigs } from '../accounts/governance.js'
import { buyDestination, notificationsOf } from './buy-registrations.js'
import { creativeFires } from './creative-fires.js'
import { deliveryReports, type DataDelay, type OffCadenceType } from './delivery-reports.js'
import type { DeliverySource } from './delivery-snapshot.js'
import type { MeasurementWindow } from './measurement-windows.js'
import { notificationFires } from './notification-fires.js'
import type { SellerEvents } from './seller-events.js'

/** Impairment reasons that must not wait for the general coalescence window (fraud, brand safety). */
const LATENCY_SENSITIVE = new Set(['policy_violation'])

export interface WebhookEventsOptions {
  readonly storage: Storage
  readonly sender: WebhookSender
  /** Unix seconds. */
  readonly now: () => number
  readonly retryHorizonSeconds: number
  /** Cumulative delivery of a buy at an instant (the seller's delivery clock: `simulatedDelivery`). */
  readonly delivery: DeliverySource
  /** Brings a stored buy up to the seller's clock (and announces what changed) before a scheduled report. */
  readonly settle?: (buy: MediaBuyRecord) => Promise<MediaBuyRecord>
  /** Replaces every buy's reporting cadence, seconds (demos, tests). */
  readonly reportPeriodSeconds?: number
  /** Whether a buy's delivery data is ready at an instant (a scheduled report due while not: `delayed`). */
  readonly readiness?: (buy: MediaBuyRecord, at: number) => Promise<DataDelay | undefined>
  /**
   * A buy's measurement windows (window_update reports as later windows mature).
   * Called inside the transaction that starts the buy's schedule: it reads the seller's own records only (as
   * the default does, from the catalog), never a remote service.
   */
  readonly measurementWindows?: (buy: MediaBuyRecord) => Promise<readonly MeasurementWindow[]>
  /** Seconds of one measurement day (default 86,400; demos and tests shorten it). */
  readonly measurementDaySeconds?: number
  readonly log?: (entry: Record<string, unknown>) => void
}

export interface WebhookEvents extends SellerEvents {
  /** Sends every scheduled report due now; resolves with how many went. The app calls it periodically. */
  tick(): Promise<number>
  /** An off-cadence delivery report for a window of the buy. */
  offCadenceReport(
    buy: MediaBuyRecord,
    type: OffCadenceType,
    window: { start: number; end: number; expectedAt?: number },
  ): Promise<string | undefined>
}

const afterFinal = (error: unknown) => WebhookError.is(error) && error.code === 'webhook_after_final'

/**
 * @example
 * const events = createWebhookEvents({ storage, sender, now, retryHorizonSeconds: 86_400 })
 * setInterval(() => void events.tick(), 60_000)
 */
export function createWebhookEvents(options: WebhookEventsOptions): WebhookEvents {
  const { storage, sender, now } = options
  const records = storage.records
  const log = options.log ?? (() => {})
  const reports = deliveryReports({
    records,
    sender,
    delivery: options.delivery,
    now,
    ...(options.reportPeriodSeconds ? { periodSeconds: options.reportPeriodSeconds } : {}),
    ...(options.readiness ? { readiness: options.readiness } : {}),
    ...(options.measurementWindows ? { measurementWindows: options.measurementWindows } : {}),
    ...(options.measurementDaySeconds ? { measurementDaySeconds: options.measurementDaySeconds } : {}),
  })
  const fires = notificationFires({ sender })
  const creatives = creativeFires({ records, fires, now })
  const buyRecord = async (id: string) => (await records.get<MediaBuyRecord>('media_buy', id))?.body

  return {
    async buyStatusChanged(change) {
      await reports.ensure(change.buy, true)
    },

    async impairmentRaised(change) {
      const registration = notificationsOf(change.buy)
      if (!registration) return
      const impairment = change.impairment
      const reason = String(impairment.reason_code ?? '')
      const event = {
        task_id: `impairment_${crypto.randomUUID()}`,
        task_type: 'create_media_buy',
        status: 'completed',
        ...(typeof impairment.impairment_id === 'string'
          ? { notification_id: impairment.impairment_id }
          : {}),
        message: `media buy ${change.buy.media_buy_id}: ${String(impairment.resource_type ?? 'resource')} ${String(impairment.resource_id ?? '')} impairs delivery`,
        result: {
          notification_type: 'impairment',
          media_buy_id: change.buy.media_buy_id,
          status: change.buy.status,
          impairment,
          impairments: change.buy.impairments,
        },
      }
      try {
        await sender
          .mediaBuy({
            mediaBuyId: change.buy.media_buy_id,
            notifications: registration,
            owner: change.buy.owner,
          })
          .impairment(event, {
            key: change.resourceKey,
            class: LATENCY_SENSITIVE.has(reason) ? 'latency-sensitive' : 'impairment',
          })
      } catch (error) {
        if (!afterFinal(error)) throw error
      }
    },

    async buyClosed(buy) {
      try {
        await reports.final(buy)
      } catch (error) {
        if (!afterFinal(error)) throw error
      }
    },

    async deliveryAdvanced(buy) {
      await reports.ensure(buy)
      await reports.restated(buy)
      // Window updates first: a scheduled report then names the next maturity still to come.
      await reports.matured(buy)
      await reports.scheduled(buy)
    },

    async creativeStatusChanged(creative, from) {
      await creatives.statusChanged(creative, from)
    },

    async creativePurged(creative, kind) {
      await creatives.purged(creative, kind)
    },

    async accountStatusChanged(account, from) {
      // To the owner's agent-level configs that list it (3.1.19 has no account-level account.* event).
      const configs = (await records.get<AgentConfigs>(AGENT_CONFIGS_KIND, account.owner))?.body
      const observedAt = new Date(Math.floor(now()) * 1000).toISOString().replace('.000Z', 'Z')
      await fires.fire(
        account.owner,
        `agent:${account.owner}`,
        configs?.notification_configs,
        ACCOUNT_STATUS_CHANGED,
        {
          notification_id: `account:${account.account_id}:${account.status}:${observedAt}`,
          account_id: account.account_id,
          transition: {
            ...(from !== undefined ? { from } : {}),
            to: account.status,
            observed_at: observedAt,
          },
        },
      )
      log({ event: 'accountStatusChanged', account_id: account.account_id, from, to: account.status })
    },

    async capabilitiesChanged(capabilitiesVersion) {
      for (const agent of await allAgentConfigs(records))
        await fires.fire(
          agent.principal_id,
          `agent:${agent.principal_id}`,
          agent.notification_configs,
          CAPABILITIES_CHANGED,
          { capabilities_version: capabilitiesVersion },
        )
    },

    webhookActivity: (buy, principalId, limit) =>
      sender.webhookActivity(buyDestination(buy.media_buy_id), principalId, limit),

    async taskPushActivity(destinations, limit = 50) {
      const rows = (
        await Promise.all(
          destinations.map(async (destination) =>
            (await sender.activity(destination, limit)).map((entry) => ({ destination, ...entry })),
          ),
        )
      ).flat()
      return rows
        .sort((a, b) => b.at - a.at)
        .slice(0, limit)
        .map(({ at, ...entry }) => ({
          ...entry,
          attempted_at: new Date(Math.floor(at) * 1000).toISOString().replace('.000Z', 'Z'),
        }))
    },

    async tick() {
      let sent = 0
      for (const schedule of await reports.due(now())) {
        const stored = await buyRecord(schedule.media_buy_id)
        if (!stored) continue
        try {
          // A buy whose flight ended completes here: its final report goes (buyClosed), not a scheduled one.
          const buy = options.settle ? await options.settle(stored) : stored
          sent += await reports.matured(buy)
          if (await reports.scheduled(buy)) sent++
        } catch (error) {
          if (!afterFinal(error))
            log({ event: 'report_failed', media_buy_id: stored.media_buy_id, error: String(error) })
        }
      }
      return sent
    },

    offCadenceReport: (buy, type, window) => reports.offCadence(buy, type, window),
  }
}
