/**
 * Delivery reports on a buy's `reporting_webhook` cadence. Each buy with a reporting registration has a
 * schedule record (last sequence number, the start of the window not yet reported, when the next report is
 * due). A scheduled report is claimed by a compare-and-set on that record, so several instances on one
 * database never send the same sequence number twice; it covers the window up to the moment it is sent (a
 * late scheduler sends one report for the whole gap, not a backlog) and names `next_expected_at`. Off-cadence
 * reports (`delayed`, `adjusted`, `window_update`) take the next sequence number too. The `final` report goes
 * through the sender's `finish`, after the buy's queued impairments, and closes the buy: nothing more fires.
 */
import type { WebhookSender } from '@adwire/webhooks'
import { recordFire } from '../activity/webhook-activity.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import type { RecordStore } from '../storage/types.js'
import { buyDestination, notificationsOf, reportingOf, reportingPeriodSeconds } from './buy-registrations.js'
import { deliveryRow, type DeliverySource } from './delivery-snapshot.js'

export const SCHEDULE_KIND = 'report_schedule'
const TERMINAL = new Set(['completed', 'canceled', 'rejected'])

/** A buy's reporting schedule. */
export interface ReportSchedule {
  readonly media_buy_id: string
  /** The last sequence number sent (0: none yet). */
  readonly sequence_number: number
  /** Unix seconds: the start of the window the next report covers. */
  readonly window_start: number
  /** Unix seconds: when the next scheduled report is due. */
  readonly next_at: number
  readonly closed?: boolean
}

export type OffCadenceType = 'delayed' | 'adjusted' | 'window_update'

export interface DeliveryReportsOptions {
  readonly records: RecordStore
  readonly sender: WebhookSender
  readonly delivery: DeliverySource
  readonly now: () => number
  /** Replaces every buy's cadence (seconds): demos and tests. Default: the buy's reporting_frequency. */
  readonly periodSeconds?: number
}

const iso = (seconds: number) => new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z')
const seconds = (value: string) => Date.parse(value) / 1000

export function deliveryReports(options: DeliveryReportsOptions) {
  const { records, sender, delivery, now } = options
  const periodOf = (buy: MediaBuyRecord) => options.periodSeconds ?? reportingPeriodSeconds(buy)
  const webhooks = (buy: MediaBuyRecord) => {
    const reporting = reportingOf(buy)
    const notifications = notificationsOf(buy)
    return sender.mediaBuy({
      mediaBuyId: buy.media_buy_id,
      ...(reporting ? { reporting } : {}),
      ...(notifications ? { notifications } : {}),
    })
  }

  /** Takes the next sequence number (and, for a scheduled report, moves the window); undefined if lost. */
  async function claim(buy: MediaBuyRecord, scheduled: boolean) {
    for (let tries = 0; tries < 5; tries++) {
      const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, buy.media_buy_id)
      if (!stored || stored.body.closed) return undefined
      const at = now()
      if (scheduled && stored.body.next_at > at) return undefined
      const next: ReportSchedule = scheduled
        ? {
            ...stored.body,
            sequence_number: stored.body.sequence_number + 1,
            window_start: at,
            next_at: at + periodOf(buy),
          }
        : { ...stored.body, sequence_number: stored.body.sequence_number + 1 }
      if (await records.update(SCHEDULE_KIND, buy.media_buy_id, stored.revision, next))
        return { before: stored.body, after: next, at }
    }
    return undefined
  }

  async function send(buy: MediaBuyRecord, result: Record<string, unknown>): Promise<string> {
    const key = await webhooks(buy).report({ result })
    await noteFire(buy, key, result)
    return key
  }

  async function noteFire(buy: MediaBuyRecord, key: string, result: Record<string, unknown>) {
    const registration = reportingOf(buy)!
    await recordFire(records, buy.owner, {
      idempotency_key: key,
      destination: buyDestination(buy.media_buy_id),
      notification_type: String(result.notification_type),
      ...(typeof result.sequence_number === 'number' ? { sequence_number: result.sequence_number } : {}),
      url: String(registration.config.url),
      payload_size_bytes: Buffer.byteLength(JSON.stringify(result)),
      media_buy_id: buy.media_buy_id,
      fired_at: now(),
    })
  }

  const base = (
    buy: MediaBuyRecord,
    type: string,
    sequence: number | undefined,
    start: number,
    end: number,
  ) => ({
    notification_type: type,
    ...(sequence !== undefined ? { sequence_number: sequence } : {}),
    reporting_period: { start: iso(start), end: iso(end) },
    currency: buy.currency,
    ...(buy.sandbox ? { sandbox: true } : {}),
  })

  return {
    /** Starts the buy's schedule when it has a reporting registration (idempotent). */
    async ensure(buy: MediaBuyRecord): Promise<void> {
      if (!reportingOf(buy) || TERMINAL.has(buy.status)) return
      const start = Math.max(now(), seconds(buy.start_time) || now())
      await records.insert(SCHEDULE_KIND, buy.media_buy_id, buy.owner, {
        media_buy_id: buy.media_buy_id,
        sequence_number: 0,
        window_start: now(),
        next_at: start + periodOf(buy),
      } satisfies ReportSchedule)
    },

    /** Sends the buy's scheduled report if one is due; resolves with its key. */
    async scheduled(buy: MediaBuyRecord): Promise<string | undefined> {
      if (TERMINAL.has(buy.status) || !reportingOf(buy)) return undefined
      const claimed = await claim(buy, true)
      if (!claimed) return undefined
      const { before, after, at } = claimed
      return send(buy, {
        ...base(buy, 'scheduled', after.sequence_number, before.window_start, at),
        next_expected_at: iso(after.next_at),
        media_buy_deliveries: [await deliveryRow(delivery, buy, before.window_start, at)],
      })
    },

    /** An off-cadence report: data late for a window, revised data for one, or a measurement window update. */
    async offCadence(
      buy: MediaBuyRecord,
      type: OffCadenceType,
      window: { start: number; end: number; expectedAt?: number },
    ): Promise<string | undefined> {
      if (TERMINAL.has(buy.status) || !reportingOf(buy)) return undefined
      const claimed = await claim(buy, false)
      if (!claimed) return undefined
      const extra: Record<string, unknown> =
        type === 'delayed'
          ? {
              status: 'reporting_delayed',
              expected_availability: iso(window.expectedAt ?? claimed.at + 3600),
            }
          : type === 'adjusted'
            ? { is_adjusted: true }
            : { is_final: true, finalized_at: iso(claimed.at) }
      const row = await deliveryRow(delivery, buy, window.start, window.end, extra)
      if (type === 'window_update')
        row.by_package = (row.by_package as Record<string, unknown>[]).map((pkg) => ({
          ...pkg,
          measurement_window: 'c7',
          supersedes_window: 'c3',
        }))
      return send(buy, {
        ...base(buy, type, claimed.after.sequence_number, window.start, window.end),
        next_expected_at: iso(claimed.after.next_at),
        ...(type === 'delayed' ? { partial_data: true, unavailable_count: 1 } : {}),
        media_buy_deliveries: [row],
      })
    },

    /**
     * The buy ended (completed, canceled or rejected): its queued impairments go first, then the final report
     * (cumulative over the flight), then nothing more. Without a reporting registration the buy is closed in
     * the outbox all the same. Resolves with the final report's key.
     */
    async final(buy: MediaBuyRecord): Promise<string | undefined> {
      const status = buy.status as 'completed' | 'canceled' | 'rejected'
      const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, buy.media_buy_id)
      let sequence: number | undefined
      if (stored) {
        if (stored.body.closed) return undefined
        sequence = stored.body.sequence_number + 1
        await records.update(SCHEDULE_KIND, buy.media_buy_id, stored.revision, {
          ...stored.body,
          sequence_number: sequence,
          closed: true,
        })
      }
      const at = now()
      const result = {
        ...base(buy, 'final', sequence, seconds(buy.start_time), Math.max(at, seconds(buy.start_time))),
        media_buy_deliveries: [
          await deliveryRow(delivery, buy, undefined, at, { is_final: true, finalized_at: iso(at) }),
        ],
      }
      const key = await webhooks(buy).finish(status, { result })
      if (key) await noteFire(buy, key, result)
      return key
    },

    /** The schedules due at `at` (Unix seconds), oldest first, at most `limit`. */
    async due(at: number, limit = 500): Promise<ReportSchedule[]> {
      const due: ReportSchedule[] = []
      let afterSeq: number | undefined
      for (;;) {
        const page = await records.list<ReportSchedule>(SCHEDULE_KIND, {
          limit: 500,
          ...(afterSeq ? { afterSeq } : {}),
        })
        for (const row of page) if (!row.body.closed && row.body.next_at <= at) due.push(row.body)
        if (page.length < 500 || due.length >= limit) return due.slice(0, limit)
        afterSeq = page.at(-1)!.seq
      }
    },
  }
}

export type DeliveryReports = ReturnType<typeof deliveryReports>
