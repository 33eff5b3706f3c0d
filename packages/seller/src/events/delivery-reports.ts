/**
 * Delivery reports on a buy's `reporting_webhook` cadence. Each buy with a reporting registration has a
 * schedule record (last sequence number, the start of the window not yet reported, when the next report is
 * due). Every report is claimed by a compare-and-set on that record, so several instances on one database
 * never send the same sequence number twice. A scheduled report covers the window up to the moment it is
 * sent (a late scheduler sends one report for the whole gap, not a backlog) and names `next_expected_at`.
 * Off-cadence reports take the next sequence number too:
 * - `delayed`: a scheduled report is due but the delivery data is not ready (the reporting upstream is
 *   down): no figures, `reporting_delayed`, `expected_availability`; the window stays open, and once the
 *   data is ready the scheduled report covers it all.
 * - `adjusted`: the figures of the last reported window changed (late data restating it): that window again,
 *   `is_adjusted`.
 * - `window_update`: a buy measured in maturing windows (live → C3 → C7) gets each later window's data for
 *   the periods it has matured for, superseding the earlier window; to the reporting_webhook, else to the
 *   buy's push_notification_config.
 * The `final` report goes through the sender's `finish`, after the buy's queued impairments, and closes the
 * buy: nothing more fires.
 */
import type { WebhookRegistration, WebhookSender } from '@adwire/webhooks'
import type { MediaBuyRecord } from '../media-buys/types.js'
import type { RecordStore } from '../storage/types.js'
import { notificationsOf, reportingOf, reportingPeriodSeconds } from './buy-registrations.js'
import { deliveryRow, type DeliverySource } from './delivery-snapshot.js'
import {
  asWindow,
  nextMatured,
  nextMaturity,
  startCursors,
  type MeasurementWindow,
} from './measurement-windows.js'

export const SCHEDULE_KIND = 'report_schedule'
const TERMINAL = new Set(['completed', 'canceled', 'rejected'])

/** Delivery figures as reported (what a restatement is compared with). */
interface Figures {
  readonly impressions: number
  readonly spend: number
  readonly clicks: number
}

/** The last window a scheduled report covered, with the figures it sent. */
export interface ReportedWindow {
  readonly start: number
  readonly end: number
  readonly totals: Figures
  /** Unix seconds these figures were sent (a scheduled or an adjusted report). */
  readonly reported_at: number
}

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
  /** Unix seconds the final report was queued. */
  readonly closed_at?: number
  /** `push`: no reporting_webhook, only window updates to the push_notification_config (nothing scheduled). */
  readonly channel?: 'reporting' | 'push'
  readonly last_window?: ReportedWindow
  /** The buy's measurement windows (live first), when its data matures in stages. */
  readonly windows?: readonly MeasurementWindow[]
  /** Per later window: the end of the periods its data was sent for. */
  readonly matured?: readonly number[]
  /** Unix seconds: when the next period matures for a later window. */
  readonly mature_at?: number
}

export type OffCadenceType = 'delayed' | 'adjusted' | 'window_update'

/** Why a buy's delivery data is not ready, and when it is expected (Unix seconds), if known. */
export interface DataDelay {
  readonly upstream: string
  readonly expectedAt?: number
}

export interface DeliveryReportsOptions {
  readonly records: RecordStore
  readonly sender: WebhookSender
  readonly delivery: DeliverySource
  readonly now: () => number
  /** Replaces every buy's cadence (seconds): demos and tests. Default: the buy's reporting_frequency. */
  readonly periodSeconds?: number
  /** Whether the buy's delivery data is ready at an instant (undefined: ready). Default: always ready. */
  readonly readiness?: (buy: MediaBuyRecord, at: number) => Promise<DataDelay | undefined>
  /**
   * The buy's measurement windows (see measurement-windows.ts). Default: none.
   * Called inside the transaction that starts the buy's schedule: it reads the seller's own records only (as
   * the default does, from the catalog), never a remote service.
   */
  readonly measurementWindows?: (buy: MediaBuyRecord) => Promise<readonly MeasurementWindow[]>
  /** Seconds of one measurement day (periods and availability days). Default 86,400; demos and tests shorten it. */
  readonly measurementDaySeconds?: number
}

const iso = (seconds: number) => new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z')
const seconds = (value: string) => Date.parse(value) / 1000
const figures = (totals: unknown): Figures => {
  const source = totals as Record<string, number>
  return {
    impressions: Number(source.impressions ?? 0),
    spend: Number(source.spend ?? 0),
    clicks: Number(source.clicks ?? 0),
  }
}
const same = (a: Figures, b: Figures) =>
  a.impressions === b.impressions && a.spend === b.spend && a.clicks === b.clicks

/** When the schedule next has something to send. */
export const dueAt = (schedule: ReportSchedule) =>
  Math.min(
    schedule.channel === 'push' ? Number.POSITIVE_INFINITY : schedule.next_at,
    schedule.mature_at ?? Number.POSITIVE_INFINITY,
  )

/** A planned report: the schedule as it is after it, and its result (none: only the schedule moves). */
interface Plan {
  readonly next: ReportSchedule
  readonly result?: Record<string, unknown>
}

export function deliveryReports(options: DeliveryReportsOptions) {
  const { records, sender, delivery, now } = options
  const day = options.measurementDaySeconds ?? 86_400
  const periodOf = (buy: MediaBuyRecord) => options.periodSeconds ?? reportingPeriodSeconds(buy)
  /** Where the buy's reports go: its reporting_webhook, else (window updates) its push_notification_config. */
  const channelOf = (buy: MediaBuyRecord) => reportingOf(buy) ?? notificationsOf(buy)
  const webhooks = (buy: MediaBuyRecord, reporting: WebhookRegistration | undefined) => {
    const notifications = notificationsOf(buy)
    return sender.mediaBuy({
      mediaBuyId: buy.media_buy_id,
      owner: buy.owner,
      ...(reporting ? { reporting } : {}),
      ...(notifications ? { notifications } : {}),
    })
  }

  /**
   * Plans a report on the stored schedule and claims it by compare-and-set (a lost race plans again on the
   * schedule the winner left), then sends it. Resolves with the sent report's key.
   */
  async function transact(
    buy: MediaBuyRecord,
    plan: (schedule: ReportSchedule, at: number) => Promise<Plan | undefined>,
  ): Promise<string | undefined> {
    for (let tries = 0; tries < 5; tries++) {
      const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, buy.media_buy_id)
      if (!stored || stored.body.closed) return undefined
      const planned = await plan(stored.body, now())
      if (!planned) return undefined
      // The schedule's move and the report it sends commit together: never sent twice, never lost.
      const outcome = await records.transaction(async () => {
        if (!(await records.update(SCHEDULE_KIND, buy.media_buy_id, stored.revision, planned.next)))
          return { lost: true as const }
        return { key: planned.result ? await send(buy, planned.result) : undefined }
      })
      if ('lost' in outcome) continue
      return outcome.key
    }
    return undefined
  }

  async function send(buy: MediaBuyRecord, result: Record<string, unknown>): Promise<string | undefined> {
    const registration = channelOf(buy)
    if (!registration) return undefined
    return webhooks(buy, registration).report({ result })
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

  /** The schedule's next expected notification, when it has one (not before `at`: one already due goes now). */
  const expected = (schedule: ReportSchedule, at: number) => {
    const due = dueAt(schedule)
    return Number.isFinite(due) ? { next_expected_at: iso(Math.max(due, at)) } : {}
  }

  /** A delayed report: the window stays open; no figures until the data is ready. */
  function delayed(buy: MediaBuyRecord, schedule: ReportSchedule, at: number, delay: DataDelay): Plan {
    const retry =
      delay.expectedAt !== undefined && delay.expectedAt > at ? delay.expectedAt : at + periodOf(buy)
    const next = { ...schedule, sequence_number: schedule.sequence_number + 1, next_at: retry }
    return {
      next,
      result: {
        ...base(buy, 'delayed', next.sequence_number, schedule.window_start, at),
        ...expected(next, at),
        partial_data: true,
        unavailable_count: 1,
        media_buy_deliveries: [
          {
            media_buy_id: buy.media_buy_id,
            status: 'reporting_delayed',
            expected_availability: iso(retry),
            totals: { impressions: 0, spend: 0 },
            by_package: [],
          },
        ],
        errors: [
          {
            code: 'SERVICE_UNAVAILABLE',
            message: `delivery data from ${delay.upstream} is not available for this period yet; it follows when it is`,
            recovery: 'transient',
          },
        ],
      },
    }
  }

  /** The buy's windows for a new schedule (looked up once: the schedule keeps them). */
  async function windowsOf(buy: MediaBuyRecord) {
    const windows = options.measurementWindows ? await options.measurementWindows(buy) : []
    return windows.length > 1 ? { windows } : {}
  }

  return {
    /**
     * Starts the buy's schedule (idempotent) when it has a reporting registration, or, with `push`, a
     * push_notification_config and measurement windows (its window updates).
     */
    async ensure(buy: MediaBuyRecord, push = false): Promise<void> {
      if (TERMINAL.has(buy.status)) return
      const reporting = reportingOf(buy)
      if (!reporting && !(push && notificationsOf(buy))) return
      const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, buy.media_buy_id)
      if (stored && (stored.body.channel !== 'push' || !reporting)) return
      const measured = await windowsOf(buy)
      if (!reporting && !measured.windows) return
      const start = Math.max(now(), seconds(buy.start_time) || now())
      const schedule: ReportSchedule = {
        media_buy_id: buy.media_buy_id,
        sequence_number: stored?.body.sequence_number ?? 0,
        window_start: now(),
        next_at: start + periodOf(buy),
        ...(reporting ? {} : { channel: 'push' as const }),
        // A measured buy is checked at the next tick (which sets when its first period matures).
        ...(measured.windows ? { mature_at: now() } : {}),
        ...(stored ? { matured: stored.body.matured, mature_at: stored.body.mature_at } : {}),
        ...measured,
      }
      // A reporting_webhook added later turns a push-only schedule into a scheduled one.
      if (stored) await records.update(SCHEDULE_KIND, buy.media_buy_id, stored.revision, schedule)
      else await records.insert(SCHEDULE_KIND, buy.media_buy_id, buy.owner, schedule)
    },

    /**
     * Sends the buy's scheduled report if one is due; resolves with its key. When the data for the window is
     * not ready, a `delayed` report goes instead and the window stays open.
     */
    scheduled(buy: MediaBuyRecord): Promise<string | undefined> {
      if (TERMINAL.has(buy.status) || !reportingOf(buy)) return Promise.resolve(undefined)
      return transact(buy, async (schedule, at) => {
        if (schedule.channel === 'push' || schedule.next_at > at) return undefined
        const delay = options.readiness ? await options.readiness(buy, at) : undefined
        if (delay) return delayed(buy, schedule, at, delay)
        let row = await deliveryRow(delivery, buy, schedule.window_start, at)
        if (schedule.windows) row = asWindow(row, schedule.windows, 0, iso(at))
        const next: ReportSchedule = {
          ...schedule,
          sequence_number: schedule.sequence_number + 1,
          window_start: at,
          next_at: at + periodOf(buy),
          last_window: {
            start: schedule.window_start,
            end: at,
            totals: figures(row.totals),
            reported_at: at,
          },
        }
        return {
          next,
          result: {
            ...base(buy, 'scheduled', next.sequence_number, schedule.window_start, at),
            ...expected(next, at),
            media_buy_deliveries: [row],
          },
        }
      })
    },

    /**
     * Late data restated the last reported window (the controller's simulate_delivery counts inside it): an
     * `adjusted` report for that window with the new figures. Resolves with its key, if one went.
     */
    restated(buy: MediaBuyRecord): Promise<string | undefined> {
      if (TERMINAL.has(buy.status) || !reportingOf(buy) || !buy.simulated_log?.length)
        return Promise.resolve(undefined)
      return transact(buy, async (schedule, at) => {
        const last = schedule.last_window
        if (!last) return undefined
        const late = (buy.simulated_log ?? []).some(
          (entry) => entry.recorded_at >= last.reported_at && entry.at <= last.end,
        )
        if (!late) return undefined
        const row = await deliveryRow(delivery, buy, last.start, last.end, { is_adjusted: true })
        const totals = figures(row.totals)
        if (same(totals, last.totals)) return undefined
        const next: ReportSchedule = {
          ...schedule,
          sequence_number: schedule.sequence_number + 1,
          last_window: { ...last, totals, reported_at: at },
        }
        return {
          next,
          result: {
            ...base(buy, 'adjusted', next.sequence_number, last.start, last.end),
            ...expected(next, at),
            media_buy_deliveries: [row],
          },
        }
      })
    },

    /**
     * Sends a `window_update` for every later measurement window with newly matured periods (one report per
     * window); resolves with how many went.
     */
    async matured(buy: MediaBuyRecord): Promise<number> {
      const first = buy.serving[0]?.[0]
      if (TERMINAL.has(buy.status) || first === undefined || !channelOf(buy)) return 0
      let sent = 0
      for (let stages = 0; stages < 8; stages++) {
        let reported = false
        await transact(buy, async (schedule, at) => {
          const windows = schedule.windows
          if (!windows || (schedule.mature_at !== undefined && schedule.mature_at > at)) return undefined
          const cursors = [...(schedule.matured ?? startCursors(windows, first, day))]
          const range = nextMatured(windows, cursors, at, day)
          if (!range) {
            const matureAt = nextMaturity(windows, cursors, day)
            return schedule.mature_at === matureAt && schedule.matured
              ? undefined
              : { next: { ...schedule, matured: cursors, mature_at: matureAt } }
          }
          cursors[range.stage - 1] = range.to
          const row = await deliveryRow(delivery, buy, range.from, range.to)
          const moved = { ...schedule, matured: cursors, mature_at: nextMaturity(windows, cursors, day) }
          // Periods the buy did not serve in have nothing to supersede.
          if (figures(row.totals).impressions === 0 && figures(row.totals).spend === 0) {
            reported = true
            return { next: { ...moved, mature_at: at } }
          }
          const next = { ...moved, sequence_number: schedule.sequence_number + 1 }
          reported = true
          sent++
          return {
            next,
            result: {
              ...base(buy, 'window_update', next.sequence_number, range.from, range.to),
              ...expected(next, at),
              media_buy_deliveries: [asWindow(row, windows, range.stage, iso(at))],
            },
          }
        })
        if (!reported) return sent
      }
      return sent
    },

    /** An off-cadence report for a given window: data late for it, revised data, or a measurement window update. */
    offCadence(
      buy: MediaBuyRecord,
      type: OffCadenceType,
      window: { start: number; end: number; expectedAt?: number },
    ): Promise<string | undefined> {
      if (TERMINAL.has(buy.status) || !channelOf(buy)) return Promise.resolve(undefined)
      return transact(buy, async (schedule, at) => {
        const next = { ...schedule, sequence_number: schedule.sequence_number + 1 }
        if (type === 'delayed') {
          const plan = delayed(buy, { ...schedule, window_start: window.start }, window.end, {
            upstream: 'reporting',
            expectedAt: window.expectedAt ?? at + 3600,
          })
          return { next: { ...plan.next, window_start: schedule.window_start }, result: plan.result! }
        }
        let row = await deliveryRow(delivery, buy, window.start, window.end, {
          ...(type === 'adjusted' ? { is_adjusted: true } : {}),
        })
        if (type === 'window_update') {
          const windows = schedule.windows ?? [
            { window_id: 'c3', duration_days: 3 },
            { window_id: 'c7', duration_days: 7 },
          ]
          row = asWindow(row, windows, windows.length - 1, iso(at))
        }
        return {
          next,
          result: {
            ...base(buy, type, next.sequence_number, window.start, window.end),
            ...expected(next, at),
            media_buy_deliveries: [row],
          },
        }
      })
    },

    /**
     * The buy ended (completed, canceled or rejected): its queued impairments go first, then the final report
     * (cumulative over the flight), then nothing more. Without a reporting registration the buy is closed in
     * the outbox all the same. Resolves with the final report's key.
     */
    async final(buy: MediaBuyRecord): Promise<string | undefined> {
      const status = buy.status as 'completed' | 'canceled' | 'rejected'
      const reporting = reportingOf(buy)
      // The schedule's close and the final report commit together. A schedule moved meanwhile (the scheduler's
      // report) is read again: the final report takes the next number; of two closers one wins, the other sends
      // nothing.
      return records.transaction(async () => {
        let sequence: number | undefined
        for (let tries = 0; ; tries++) {
          const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, buy.media_buy_id)
          if (!stored) break
          if (stored.body.closed) return undefined
          sequence = reporting ? stored.body.sequence_number + 1 : undefined
          const closed = await records.update(SCHEDULE_KIND, buy.media_buy_id, stored.revision, {
            ...stored.body,
            sequence_number: sequence ?? stored.body.sequence_number,
            closed: true,
            closed_at: now(),
          })
          if (closed) break
          if (tries >= 20) throw new Error(`the report schedule of ${buy.media_buy_id} keeps changing`)
        }
        const at = now()
        const result = {
          ...base(buy, 'final', sequence, seconds(buy.start_time), Math.max(at, seconds(buy.start_time))),
          media_buy_deliveries: [
            await deliveryRow(delivery, buy, undefined, at, { is_final: true, finalized_at: iso(at) }),
          ],
        }
        return webhooks(buy, reporting).finish(status, { result })
      })
    },

    /** The schedules due at `at` (Unix seconds), oldest first, at most `limit`. */
    async due(at: number, limit = 500): Promise<ReportSchedule[]> {
      const due: ReportSchedule[] = []
      let afterSeq: number | undefined
      for (;;) {
        const page = await records.listDue<ReportSchedule>(SCHEDULE_KIND, at, {
          limit: 500,
          ...(afterSeq ? { afterSeq } : {}),
        })
        for (const row of page) if (!row.body.closed && dueAt(row.body) <= at) due.push(row.body)
        if (page.length < 500 || due.length >= limit) return due.slice(0, limit)
        afterSeq = page.at(-1)!.seq
      }
    },
  }
}

/** The window a buy's last scheduled report covered, if any (a restatement of it is `adjusted`). */
export async function lastReportedWindow(
  records: RecordStore,
  mediaBuyId: string,
): Promise<ReportedWindow | undefined> {
  const stored = await records.get<ReportSchedule>(SCHEDULE_KIND, mediaBuyId)
  return stored && !stored.body.closed ? stored.body.last_window : undefined
}

export type DeliveryReports = ReturnType<typeof deliveryReports>
