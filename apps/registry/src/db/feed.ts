/** The change feed's table: append (inside the transaction that changed the facts) and cursor queries. */
import { uuidv7After } from '../domain/ids.js'
import type { PendingEvent } from '../domain/snapshot-diff.js'
import type { FeedEvent } from '../domain/types.js'
import { insertMany } from './batch.js'
import type { SqlDriver, SqlExecutor, SqlValue } from '@adwire/sql'

interface EventRow {
  event_id: string
  event_type: string
  entity_type: string
  entity_id: string
  payload: string
  actor: string
  created_at: string
}

const toEvent = (row: EventRow): FeedEvent => ({
  ...row,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
})

/**
 * The feed's PostgreSQL advisory lock class (`pg_advisory_xact_lock(FEED_LOCK, hashtext(current_schema()))`):
 * one lock per schema, so instances sharing a schema append one transaction at a time while registries in other
 * schemas of the same database do not wait for each other.
 */
export const FEED_LOCK = 0x72676664

/**
 * Serialises feed appends and resolves to the greatest stored event id. On PostgreSQL it takes the feed's
 * transaction-level advisory lock (held until commit or rollback); on SQLite the write transaction
 * (`BEGIN IMMEDIATE`) already excludes every other writer.
 */
async function lockFeed(tx: SqlExecutor): Promise<string | undefined> {
  if (tx.dialect === 'postgres')
    await tx.run(`SELECT pg_advisory_xact_lock(${FEED_LOCK}, hashtext(current_schema()))`)
  const row = await tx.one<{ max_id: string | null }>(
    'SELECT MAX(event_id) AS max_id FROM registry_feed_events',
  )
  return row?.max_id ?? undefined
}

/**
 * Gives each pending event a UUIDv7 id and stores it; resolves to the stored events, in order.
 *
 * Events become visible to feed readers in id order, so a strictly-after cursor never skips one: the ids are
 * made after taking the feed lock and are greater than every stored id (even when this instance's clock is
 * behind the one that wrote the newest event), and the lock is held until the transaction ends, so
 * transactions that append commit in id order. Call it as the transaction's last statement: nothing then
 * waits for another lock while holding the feed's, and the lock is held only for the insert and the commit.
 */
export async function appendEvents(
  tx: SqlExecutor,
  pending: readonly PendingEvent[],
  actor: string,
  now: number,
): Promise<FeedEvent[]> {
  if (pending.length === 0) return []
  const created_at = new Date(now).toISOString()
  let floor = await lockFeed(tx)
  const events = pending.map((event) => {
    floor = uuidv7After(floor, now)
    return { event_id: floor, ...event, actor, created_at }
  })
  await insertMany(
    tx,
    'registry_feed_events',
    ['event_id', 'event_type', 'entity_type', 'entity_id', 'payload', 'actor', 'created_at'],
    events.map((event) => [
      event.event_id,
      event.event_type,
      event.entity_type,
      event.entity_id,
      JSON.stringify(event.payload),
      event.actor,
      event.created_at,
    ]),
  )
  return events
}

/** A type filter: exact names and trailing-`*` prefixes. */
export interface TypeFilter {
  readonly exact: readonly string[]
  readonly prefixes: readonly string[]
}

function filterClause(filter: TypeFilter | undefined): { sql: string; params: SqlValue[] } {
  if (!filter || (filter.exact.length === 0 && filter.prefixes.length === 0)) return { sql: '', params: [] }
  const parts: string[] = []
  const params: SqlValue[] = []
  for (const name of filter.exact) {
    parts.push('event_type = ?')
    params.push(name)
  }
  for (const prefix of filter.prefixes) {
    parts.push("event_type LIKE ? ESCAPE '\\'")
    params.push(`${prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`)
  }
  return { sql: ` AND (${parts.join(' OR ')})`, params }
}

export interface FeedStore {
  getEvent(eventId: string): Promise<FeedEvent | undefined>
  /** Events with `event_id > after` (all when `after` is unset) created at or after `since`, oldest first. */
  eventsAfter(query: {
    after?: string
    since: string
    filter?: TypeFilter
    limit: number
  }): Promise<FeedEvent[]>
  /** The newest matching event's `created_at` at or after `since`. */
  latestCreatedAt(since: string, filter?: TypeFilter): Promise<string | undefined>
  /** Deletes events older than `before`; resolves to how many. */
  prune(before: string): Promise<number>
}

/** The feed statements on `db`. */
export function feedStore(db: SqlDriver): FeedStore {
  return {
    async getEvent(eventId) {
      const row = await db.one<EventRow>('SELECT * FROM registry_feed_events WHERE event_id = ?', [eventId])
      return row && toEvent(row)
    },
    async eventsAfter({ after, since, filter, limit }) {
      const types = filterClause(filter)
      const rows = await db.all<EventRow>(
        `SELECT * FROM registry_feed_events WHERE created_at >= ?${after ? ' AND event_id > ?' : ''}${types.sql}
         ORDER BY event_id LIMIT ?`,
        [since, ...(after ? [after] : []), ...types.params, limit],
      )
      return rows.map(toEvent)
    },
    async latestCreatedAt(since, filter) {
      const types = filterClause(filter)
      const row = await db.one<{ latest: string | null }>(
        `SELECT MAX(created_at) AS latest FROM registry_feed_events WHERE created_at >= ?${types.sql}`,
        [since, ...types.params],
      )
      return row?.latest ?? undefined
    },
    prune: (before) => db.run('DELETE FROM registry_feed_events WHERE created_at < ?', [before]),
  }
}
