/**
 * {@link OutboxStore} on SQLite: the `outbox` table (one row per entry, `seq` keeps insertion order),
 * `webhook_activity` (one row per attempt), `outbox_media_buys` (the media buys of pending entries, kept by
 * triggers) and `media_buys_closed`. Enqueue, lease and record are IMMEDIATE transactions, so that a worker in
 * another process never leases an entry twice nor records an attempt under a lost fence, an entry of a closed
 * media buy is never stored, and a barrier is never leased while an earlier entry of its buys to the same URL
 * is pending.
 */
import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  ActivityEntry,
  AttemptOutcome,
  EnqueueResult,
  LeasedOutboxEntry,
  NewOutboxEntry,
  OutboxEntry,
  OutboxStore,
} from '@adwire/webhooks'
import { ACTIVITY_RETENTION_SECONDS } from '@adwire/webhooks'
import { StoreError } from './errors.js'
import { gated, WriteGate } from './transaction.js'

interface EntryRow {
  seq: number
  id: string
  destination: string
  url: string
  idempotencyKey: string
  body: string
  headers: string
  coalesceKey: string | null
  createdAt: number
  nextAttemptAt: number
  deadlineAt: number
  attempts: number
  mediaBuyIds: string
  barrier: number
}

const entryColumns = `seq, id, destination, url, idempotency_key AS idempotencyKey, body, headers,
  coalesce_key AS coalesceKey, created_at AS createdAt, next_attempt_at AS nextAttemptAt,
  deadline_at AS deadlineAt, attempts, media_buy_ids AS mediaBuyIds, barrier`

/** Media buy ids without duplicates, in the order given. */
const distinct = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])]

const toEntry = (row: EntryRow): OutboxEntry => ({
  id: row.id,
  destination: row.destination,
  url: row.url,
  idempotencyKey: row.idempotencyKey,
  body: row.body,
  headers: JSON.parse(row.headers) as Record<string, string>,
  coalesceKey: row.coalesceKey,
  createdAt: row.createdAt,
  nextAttemptAt: row.nextAttemptAt,
  deadlineAt: row.deadlineAt,
  attempts: row.attempts,
  mediaBuyIds: JSON.parse(row.mediaBuyIds) as string[],
  barrier: row.barrier === 1,
})

export class SqliteOutboxStore implements OutboxStore {
  readonly #database: Database.Database
  readonly #gate: WriteGate
  readonly #enqueue: Database.Transaction<(entry: NewOutboxEntry) => EnqueueResult>
  readonly #lease: Database.Transaction<
    (now: number, limit: number, leaseSeconds: number) => LeasedOutboxEntry[]
  >
  readonly #record: Database.Transaction<
    (id: string, fence: string, outcome: AttemptOutcome, now: number) => boolean
  >
  readonly #activity: Database.Statement<[destination: string, limit: number], ActivityEntry>
  readonly #pendingAll: Database.Statement<[], EntryRow>
  readonly #pendingOf: Database.Statement<[destination: string], EntryRow>
  readonly #closedOf: Database.Statement<[mediaBuyIds: string], string>
  readonly #close: Database.Transaction<(mediaBuyIds: readonly string[], now: number) => string[]>
  readonly #sweepEntries: Database.Statement<[before: number]>
  readonly #sweepActivity: Database.Statement<[before: number]>

  constructor(database: Database.Database, gate: WriteGate = new WriteGate()) {
    this.#gate = gate
    this.#database = database
    // A finished entry's activity rows go with it (ON DELETE CASCADE): it is kept until they are 30 days old.
    this.#sweepEntries = database.prepare(`DELETE FROM outbox WHERE state <> 'pending' AND deadline_at <= ?`)
    this.#sweepActivity = database.prepare('DELETE FROM webhook_activity WHERE at <= ?')
    const supersede = database.prepare<
      [destination: string, coalesceKey: string],
      { seq: number; id: string }
    >(
      `UPDATE outbox SET state = 'superseded'
       WHERE state = 'pending' AND destination = ? AND coalesce_key = ? AND attempts = 0 AND fence IS NULL
       RETURNING seq, id`,
    )
    const insert = database.prepare<
      [
        id: string,
        destination: string,
        url: string,
        idempotencyKey: string,
        body: string,
        headers: string,
        coalesceKey: string | null,
        createdAt: number,
        nextAttemptAt: number,
        deadlineAt: number,
        mediaBuyIds: string,
        barrier: number,
      ]
    >(
      // Triggers add the entry's media buys to outbox_media_buys and, for a barrier, close them.
      `INSERT INTO outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at, media_buy_ids, barrier)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    // Closed buys among a JSON array, in its order.
    this.#closedOf = database
      .prepare<[mediaBuyIds: string], string>(
        `SELECT ids.value FROM json_each(?) AS ids
         WHERE EXISTS (SELECT 1 FROM media_buys_closed c WHERE c.media_buy_id = ids.value)
         ORDER BY ids.key`,
      )
      .pluck()
    this.#enqueue = database.transaction((entry: NewOutboxEntry) => {
      const mediaBuyIds = JSON.stringify(distinct(entry.mediaBuyIds))
      const closed = this.#closedOf.all(mediaBuyIds)
      if (closed.length > 0) return { superseded: [], closed }
      const superseded =
        entry.coalesceKey === null
          ? []
          : supersede
              .all(entry.destination, entry.coalesceKey)
              .sort((a, b) => a.seq - b.seq)
              .map((row) => row.id)
      insert.run(
        entry.id,
        entry.destination,
        entry.url,
        entry.idempotencyKey,
        entry.body,
        JSON.stringify(entry.headers),
        entry.coalesceKey,
        entry.createdAt,
        entry.nextAttemptAt,
        entry.deadlineAt,
        mediaBuyIds,
        entry.barrier === true ? 1 : 0,
      )
      return { superseded }
    })

    // A barrier waits while an earlier entry to its URL sharing one of its buys is pending (outbox_media_buys
    // holds pending entries only); entries to another URL never hold it back.
    const selectDue = database.prepare<[now: number, now: number, limit: number], EntryRow>(
      `SELECT ${entryColumns} FROM outbox o
       WHERE state = 'pending' AND next_attempt_at <= ? AND lease_until <= ?
         AND NOT (barrier = 1 AND EXISTS (
           SELECT 1 FROM outbox_media_buys mine
             JOIN outbox_media_buys earlier
               ON earlier.media_buy_id = mine.media_buy_id AND earlier.entry_seq < mine.entry_seq
             JOIN outbox earlier_entry ON earlier_entry.seq = earlier.entry_seq AND earlier_entry.url = o.url
            WHERE mine.entry_seq = o.seq))
       ORDER BY next_attempt_at, created_at, seq LIMIT ?`,
    )
    const setLease = database.prepare<[fence: string, leaseUntil: number, seq: number]>(
      'UPDATE outbox SET fence = ?, lease_until = ? WHERE seq = ?',
    )
    this.#lease = database.transaction((now: number, limit: number, leaseSeconds: number) =>
      selectDue.all(now, now, limit).map((row): LeasedOutboxEntry => {
        const fence = randomUUID()
        setLease.run(fence, now + leaseSeconds, row.seq)
        return { ...toEntry(row), fence }
      }),
    )

    const finish = database.prepare<
      [state: string, nextAttemptAt: number | null, id: string, fence: string],
      { id: string; destination: string; idempotencyKey: string; attempts: number }
    >(
      `UPDATE outbox SET attempts = attempts + 1, fence = NULL, lease_until = 0, state = ?,
         next_attempt_at = coalesce(?, next_attempt_at)
       WHERE id = ? AND fence = ? AND state = 'pending'
       RETURNING id, destination, idempotency_key AS idempotencyKey, attempts`,
    )
    const insertActivity = database.prepare<
      [
        entryId: string,
        destination: string,
        idempotencyKey: string,
        status: string,
        httpStatus: number | null,
        attempt: number,
        error: string | null,
        at: number,
      ]
    >(
      `INSERT INTO webhook_activity (entry_id, destination, idempotency_key, status, http_status_code, attempt, error_message, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    this.#record = database.transaction((id: string, fence: string, outcome: AttemptOutcome, now: number) => {
      const state = outcome.kind === 'retry' ? 'pending' : outcome.kind
      const row = finish.get(state, outcome.kind === 'retry' ? outcome.nextAttemptAt : null, id, fence)
      if (!row) return false
      const delivered = outcome.kind === 'delivered'
      insertActivity.run(
        row.id,
        row.destination,
        row.idempotencyKey,
        delivered ? 'success' : outcome.activityStatus,
        outcome.httpStatus ?? null,
        row.attempts,
        delivered ? null : (outcome.error ?? null),
        now,
      )
      return true
    })

    this.#activity = database.prepare(
      `SELECT idempotency_key, status, http_status_code, attempt, error_message, at
       FROM webhook_activity WHERE destination = ? ORDER BY seq DESC LIMIT ?`,
    )
    this.#pendingAll = database.prepare(
      `SELECT ${entryColumns} FROM outbox WHERE state = 'pending' ORDER BY seq`,
    )
    this.#pendingOf = database.prepare(
      `SELECT ${entryColumns} FROM outbox WHERE state = 'pending' AND destination = ? ORDER BY seq`,
    )
    const closeOne = database.prepare<[mediaBuyId: string, now: number]>(
      'INSERT INTO media_buys_closed (media_buy_id, closed_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
    )
    this.#close = database.transaction((mediaBuyIds: readonly string[], now: number) =>
      distinct(mediaBuyIds).filter((id) => closeOne.run(id, now).changes > 0),
    )
  }

  async enqueue(entry: NewOutboxEntry): Promise<EnqueueResult> {
    return gated(this.#gate, this.#database, () => {
      try {
        return this.#enqueue.immediate(entry)
      } catch (error) {
        if (
          error instanceof Error &&
          'code' in error &&
          /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(String(error.code))
        ) {
          throw new StoreError('store_duplicate_entry', `outbox entry ${entry.id} exists`, { cause: error })
        }
        throw error
      }
    })
  }

  async lease(now: number, limit: number, leaseSeconds: number): Promise<LeasedOutboxEntry[]> {
    if (!(limit > 0)) return []
    return gated(
      this.#gate,
      this.#database,
      () => this.#lease.immediate(now, Number.isFinite(limit) ? Math.floor(limit) : -1, leaseSeconds),
      // The worker's lease and record never join a caller's transaction (a rollback would undo them).
      true,
    )
  }

  async record(id: string, fence: string, outcome: AttemptOutcome, now: number): Promise<boolean> {
    return gated(this.#gate, this.#database, () => this.#record.immediate(id, fence, outcome, now), true)
  }

  async activity(destination: string, limit = 100): Promise<ActivityEntry[]> {
    if (!(limit > 0)) return []
    return gated(this.#gate, this.#database, () =>
      this.#activity.all(destination, Number.isFinite(limit) ? Math.floor(limit) : -1),
    )
  }

  async pending(destination?: string): Promise<OutboxEntry[]> {
    return gated(this.#gate, this.#database, () =>
      (destination === undefined ? this.#pendingAll.all() : this.#pendingOf.all(destination)).map(toEntry),
    )
  }

  async closedMediaBuys(mediaBuyIds: readonly string[]): Promise<string[]> {
    return gated(this.#gate, this.#database, () => this.#closedOf.all(JSON.stringify(distinct(mediaBuyIds))))
  }

  async closeMediaBuys(mediaBuyIds: readonly string[], now: number): Promise<string[]> {
    return gated(this.#gate, this.#database, () => this.#close.immediate(mediaBuyIds, now))
  }

  /**
   * Deletes delivered, failed and superseded entries whose deadline passed 30 days ago, with their
   * webhook_activity rows, and any other activity row older than 30 days ({@link ACTIVITY_RETENTION_SECONDS},
   * as AdCP requires them kept). Closed media buy records are kept. Runs in the caller's transaction
   * ({@link SqliteStores.sweep}); resolves with the entries deleted.
   */
  sweepNow(now: number): number {
    const before = now - ACTIVITY_RETENTION_SECONDS
    const entries = this.#sweepEntries.run(before).changes
    this.#sweepActivity.run(before)
    return entries
  }
}
