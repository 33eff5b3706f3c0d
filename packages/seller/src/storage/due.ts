/**
 * The records the seller's clock looks for (due work, report schedules, live buys): each write stores when its
 * record is next due in the indexed `due_at` column, so the periodic work reads the due rows
 * ({@link RecordStore.listDue}) instead of every row of the kind on every tick. A record that is never due
 * (finished work, a closed schedule, a terminal buy) has none, and costs the ticks nothing.
 */

/** When a record of a kind is due (Unix seconds), or undefined: never. */
export type DueRule = (body: Record<string, unknown>) => number | undefined

const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

const TERMINAL_BUY = new Set(['completed', 'rejected', 'canceled'])

/** The rules, by record kind (`due_work`, `report_schedule`, `media_buy`). */
export const DUE_RULES: Readonly<Record<string, DueRule>> = {
  // A review: at its due time, or when the lease of the instance running it expires.
  due_work: (body) => {
    const at = num(body.due_at)
    return at === undefined ? undefined : Math.max(at, num(body.lease_until) ?? 0)
  },
  // A report schedule: its next scheduled report (not on the push channel) or the next window maturing.
  report_schedule: (body) => {
    if (body.closed === true) return undefined
    const next = body.channel === 'push' ? undefined : num(body.next_at)
    const mature = num(body.mature_at)
    if (next === undefined) return mature
    return mature === undefined ? next : Math.min(next, mature)
  },
  // A buy not yet terminal: its status may move with the clock (flight start and end) at any tick.
  media_buy: (body) => (TERMINAL_BUY.has(String(body.status)) ? undefined : 0),
}

/** The `due_at` column value of a record. */
export function dueOf(kind: string, body: object): number | null {
  return DUE_RULES[kind]?.(body as Record<string, unknown>) ?? null
}
