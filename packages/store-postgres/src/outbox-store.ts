/**
 * {@link OutboxStore} on PostgreSQL: the seller's durable outbox, leased by any number of workers, and the
 * webhook_activity log buyers read.
 */
import type {
  ActivityEntry,
  AttemptOutcome,
  LeasedOutboxEntry,
  OutboxEntry,
  OutboxStore,
} from '@adwire/webhooks'
import type { Database, Statement } from './database.js'
import { StoreError } from './errors.js'

interface OutboxRow {
  id: string
  destination: string
  url: string
  idempotency_key: string
  body: string
  headers: Record<string, string>
  coalesce_key: string | null
  created_at: number
  next_attempt_at: number
  deadline_at: number
  attempts: number
  fence?: string
}

const ENTRY_COLUMNS =
  'id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at, attempts'

/**
 * - `enqueue` is one INSERT; with a coalesce key it is one short transaction that first takes a transaction
 *   advisory lock on (destination, coalesce key), so that of two concurrent enqueues the later one always
 *   supersedes the earlier, as if they had run one after the other;
 * - `lease` is one statement: `FOR UPDATE SKIP LOCKED` hands each due entry to exactly one leaser, with a
 *   fresh fence per entry;
 * - `record` is one statement: the fenced update and its webhook_activity row commit together or not at all.
 *
 * @example
 * for (const entry of await stores.outbox.lease(now, 20, 60)) {
 *   const response = await fetch(entry.url, { method: 'POST', headers: entry.headers, body: entry.body })
 *   await stores.outbox.record(entry.id, entry.fence, { kind: 'delivered', httpStatus: response.status }, now)
 * }
 */
export class PostgresOutboxStore implements OutboxStore {
  readonly #database: Database
  readonly #insert: Statement
  readonly #lease: Statement
  readonly #record: Statement
  readonly #activity: Statement
  readonly #pending: Statement
  readonly #pendingFor: Statement

  constructor(database: Database) {
    this.#database = database
    this.#insert = database.statement(
      'outbox_insert',
      `INSERT INTO $schema.outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at)
       VALUES ($1, $2, $3, $4, $5, $6::json, $7, $8, $9, $10)`,
    )
    this.#lease = database.statement(
      'outbox_lease',
      `WITH due AS (
         SELECT seq FROM $schema.outbox
          WHERE state = 'pending' AND next_attempt_at <= $1::float8 AND lease_until <= $1::float8
          ORDER BY next_attempt_at, created_at, seq
          LIMIT $2 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE $schema.outbox o SET fence = gen_random_uuid()::text, lease_until = $1::float8 + $3::float8
           FROM due WHERE o.seq = due.seq
         RETURNING o.*
       )
       SELECT ${ENTRY_COLUMNS}, fence FROM leased ORDER BY next_attempt_at, created_at, seq`,
    )
    this.#record = database.statement(
      'outbox_record',
      `WITH attempted AS (
         UPDATE $schema.outbox SET attempts = attempts + 1, fence = NULL, lease_until = 0,
             state = CASE $3::text WHEN 'delivered' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE 'pending' END,
             next_attempt_at = CASE WHEN $3::text = 'retry' THEN $4::float8 ELSE next_attempt_at END
          WHERE id = $1 AND fence = $2 AND state = 'pending'
         RETURNING destination, idempotency_key, attempts
       )
       INSERT INTO $schema.webhook_activity (destination, idempotency_key, status, http_status_code, attempt, error_message, at)
       SELECT destination, idempotency_key, $5::text, $6::integer, attempts, $7::text, $8::float8 FROM attempted`,
    )
    this.#activity = database.statement(
      'outbox_activity',
      `SELECT idempotency_key, status, http_status_code, attempt, error_message, at
         FROM $schema.webhook_activity WHERE destination = $1 ORDER BY seq DESC LIMIT $2`,
    )
    this.#pending = database.statement(
      'outbox_pending',
      `SELECT ${ENTRY_COLUMNS} FROM $schema.outbox WHERE state = 'pending' ORDER BY seq`,
    )
    this.#pendingFor = database.statement(
      'outbox_pending_for',
      `SELECT ${ENTRY_COLUMNS} FROM $schema.outbox WHERE state = 'pending' AND destination = $1 ORDER BY seq`,
    )
  }

  async enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<{ superseded: string[] }> {
    const values = [
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
    ]
    try {
      if (entry.coalesceKey === null) {
        await this.#database.run(this.#insert, values)
        return { superseded: [] }
      }
      const schema = this.#database.schema
      return await this.#database.transaction('outbox_enqueue', async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          JSON.stringify([this.#database.schemaName, 'outbox', entry.destination, entry.coalesceKey]),
        ])
        const superseded = await client.query<{ id: string }>(
          `WITH superseded AS (
             UPDATE ${schema}.outbox SET state = 'superseded'
              WHERE destination = $1 AND coalesce_key = $2 AND state = 'pending' AND attempts = 0 AND fence IS NULL
             RETURNING id, seq
           )
           SELECT id FROM superseded ORDER BY seq`,
          [entry.destination, entry.coalesceKey],
        )
        await client.query({ name: this.#insert.name, text: this.#insert.text, values })
        return { superseded: superseded.rows.map((row) => row.id) }
      })
    } catch (error) {
      const cause = StoreError.is(error) ? error.cause : error
      if ((cause as { code?: unknown } | undefined)?.code === '23505') {
        throw new StoreError('store_duplicate_entry', `outbox entry ${entry.id} exists`, { cause })
      }
      throw error
    }
  }

  async lease(now: number, limit: number, leaseSeconds: number): Promise<LeasedOutboxEntry[]> {
    const { rows } = await this.#database.run<OutboxRow & { fence: string }>(this.#lease, [
      now,
      Math.max(0, Math.floor(limit)),
      leaseSeconds,
    ])
    return rows.map((row) => ({ ...toEntry(row), fence: row.fence }))
  }

  async record(id: string, fence: string, outcome: AttemptOutcome, now: number): Promise<boolean> {
    const delivered = outcome.kind === 'delivered'
    const { rowCount } = await this.#database.run(this.#record, [
      id,
      fence,
      outcome.kind,
      outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
      delivered ? 'success' : outcome.activityStatus,
      outcome.httpStatus ?? null,
      delivered ? null : (outcome.error ?? null),
      now,
    ])
    return rowCount > 0
  }

  async activity(destination: string, limit = 100): Promise<ActivityEntry[]> {
    const { rows } = await this.#database.run<ActivityEntry>(this.#activity, [
      destination,
      Math.max(0, Math.floor(limit)),
    ])
    return rows
  }

  async pending(destination?: string): Promise<OutboxEntry[]> {
    const { rows } =
      destination === undefined
        ? await this.#database.run<OutboxRow>(this.#pending, [])
        : await this.#database.run<OutboxRow>(this.#pendingFor, [destination])
    return rows.map(toEntry)
  }

  /** Deletes delivered, failed and superseded entries whose deadline has passed (their activity rows stay). */
  async sweep(now: number): Promise<number> {
    const { rowCount } = await this.#database.execute(
      'outbox_sweep',
      `DELETE FROM ${this.#database.schema}.outbox WHERE state <> 'pending' AND deadline_at <= $1`,
      [now],
    )
    return rowCount
  }
}

function toEntry(row: OutboxRow): OutboxEntry {
  return {
    id: row.id,
    destination: row.destination,
    url: row.url,
    idempotencyKey: row.idempotency_key,
    body: row.body,
    headers: row.headers,
    coalesceKey: row.coalesce_key,
    createdAt: row.created_at,
    nextAttemptAt: row.next_attempt_at,
    deadlineAt: row.deadline_at,
    attempts: row.attempts,
  }
}
