/**
 * {@link OutboxStore} on PostgreSQL: the seller's durable outbox, leased by any number of workers, and the
 * webhook_activity log buyers read.
 */
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
import type { PoolClient } from 'pg'
import type { Database, Statement } from './database.js'
import { StoreError } from './errors.js'
import { maintainPartitions, type Maintenance, type PartitionedTable } from './partitions.js'

/**
 * The outbox by `deadline_at`, six hours a partition, created two days ahead (the default retry horizon is one
 * day): a finished entry is dropped with its partition, at most six hours after its deadline.
 */
export const OUTBOX_PARTITIONS: PartitionedTable = {
  table: 'outbox',
  column: 'deadline_at',
  width: 21_600,
  ahead: 2 * 86_400,
  cutoff: (now) => now,
  expired: "state <> 'pending'",
  keep: "state = 'pending'",
}

/** webhook_activity by `at`, one day a partition, dropped once its last second is 30 days old. */
export const ACTIVITY_PARTITIONS: PartitionedTable = {
  table: 'webhook_activity',
  column: 'at',
  width: 86_400,
  ahead: 2 * 86_400,
  cutoff: (now) => now - ACTIVITY_RETENTION_SECONDS,
  expired: 'true',
}

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
  media_buy_ids: string[]
  barrier: boolean
  fence?: string
}

const ENTRY_COLUMNS =
  'id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at, attempts, media_buy_ids, barrier'

/** Media buy ids without duplicates, in the order given. */
const distinct = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])]

/** `ids` that are in `found`, in the order of `ids`. */
const inOrder = (ids: readonly string[], found: readonly string[]) => ids.filter((id) => found.includes(id))

/**
 * - `enqueue` is one INSERT; with a coalesce key or media buys it is one short transaction that first takes
 *   transaction advisory locks on (destination, coalesce key), then on each media buy in id order, so that of
 *   two concurrent enqueues the later one always supersedes the earlier, and an entry of a buy either commits
 *   before the buy's final report (which then waits for it) or sees the buy closed and is refused;
 * - `lease` is one statement: `FOR UPDATE SKIP LOCKED` hands each due entry to exactly one leaser, with a
 *   fresh fence per entry; a barrier whose buys have an earlier pending entry to its URL is not due (entries
 *   to another URL never hold it back);
 * - `record` is one statement: the fenced update (by id and by the destination the fence names), its webhook_activity row and, once the entry is settled,
 *   the removal of its pending media buy rows commit together or not at all.
 *
 * @example
 * for (const entry of await stores.outbox.lease(now, 20, 60)) {
 *   const response = await fetch(entry.url, { method: 'POST', headers: entry.headers, body: entry.body })
 *   await stores.outbox.record(entry.id, entry.fence, { kind: 'delivered', httpStatus: response.status }, now)
 * }
 */
export class PostgresOutboxStore implements OutboxStore {
  readonly #database: Database
  readonly #worker: Database
  readonly #insert: Statement
  readonly #lease: Statement
  readonly #record: Statement
  readonly #recordLegacy: Statement
  readonly #activity: Statement
  readonly #pending: Statement
  readonly #pendingFor: Statement
  readonly #closedOf: Statement

  constructor(database: Database) {
    this.#database = database
    // The worker's lease and record never join a caller's transaction (a rollback would undo them).
    this.#worker = database.detached()
    this.#insert = database.statement(
      'outbox_insert',
      `SELECT $schema.outbox_insert($1, $2, $3, $4, $5, $6::json, $7, $8::float8, $9::float8, $10::float8, $11::text[], $12::boolean) AS seq`,
    )
    this.#lease = database.statement(
      'outbox_lease',
      `WITH due AS (
         SELECT candidate.seq FROM $schema.outbox candidate
          WHERE candidate.state = 'pending' AND candidate.next_attempt_at <= $1::float8
            AND candidate.lease_until <= $1::float8
            AND NOT (candidate.barrier AND EXISTS (
              SELECT 1 FROM $schema.outbox_media_buys mine
                JOIN $schema.outbox_media_buys earlier
                  ON earlier.media_buy_id = mine.media_buy_id AND earlier.entry_seq < mine.entry_seq
                JOIN $schema.outbox earlier_entry
                  ON earlier_entry.seq = earlier.entry_seq AND earlier_entry.url = candidate.url
               WHERE mine.entry_seq = candidate.seq))
          ORDER BY candidate.next_attempt_at, candidate.created_at, candidate.seq
          LIMIT $2 FOR UPDATE OF candidate SKIP LOCKED
       ), leased AS (
         UPDATE $schema.outbox o SET fence = gen_random_uuid()::text || ':' || o.destination, lease_until = $1::float8 + $3::float8
           FROM due WHERE o.seq = due.seq
         RETURNING o.*
       )
       SELECT ${ENTRY_COLUMNS}, fence FROM leased ORDER BY next_attempt_at, created_at, seq`,
    )
    // The fence names the entry's destination after its UUID, so that the record names the distribution key
    // (one shard when the outbox is distributed by destination); a fence without it (leased by an earlier
    // release) is recorded by id alone.
    const record = (name: string, destination: string) =>
      database.statement(
        name,
        `WITH attempted AS (
           UPDATE $schema.outbox SET attempts = attempts + 1, fence = NULL, lease_until = 0,
               state = CASE $3::text WHEN 'delivered' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE 'pending' END,
               next_attempt_at = CASE WHEN $3::text = 'retry' THEN $4::float8 ELSE next_attempt_at END
            WHERE id = $1 AND fence = $2 AND state = 'pending'${destination}
           RETURNING seq, state, destination, idempotency_key, attempts
         ), settled AS (
           DELETE FROM $schema.outbox_media_buys m USING attempted
            WHERE m.entry_seq = attempted.seq AND attempted.state <> 'pending'
         )
         INSERT INTO $schema.webhook_activity (destination, idempotency_key, status, http_status_code, attempt, error_message, at)
         SELECT destination, idempotency_key, $5::text, $6::integer, attempts, $7::text, $8::float8 FROM attempted`,
      )
    this.#record = record('outbox_record_at', ' AND destination = $9')
    this.#recordLegacy = record('outbox_record', '')
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
    this.#closedOf = database.statement(
      'outbox_closed_of',
      'SELECT media_buy_id FROM $schema.media_buys_closed WHERE media_buy_id = ANY($1::text[])',
    )
  }

  /** Serialises the writers of these media buys until the transaction ends (see the class comment). */
  async #lockMediaBuys(client: PoolClient, mediaBuyIds: readonly string[]): Promise<void> {
    for (const id of [...mediaBuyIds].sort())
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        JSON.stringify([this.#database.schemaName, 'media_buy', id]),
      ])
  }

  async #closedIn(client: PoolClient, mediaBuyIds: readonly string[]): Promise<string[]> {
    if (mediaBuyIds.length === 0) return []
    const { rows } = await client.query<{ media_buy_id: string }>({
      name: this.#closedOf.name,
      text: this.#closedOf.text,
      values: [mediaBuyIds],
    })
    return inOrder(
      mediaBuyIds,
      rows.map((row) => row.media_buy_id),
    )
  }

  async enqueue(entry: NewOutboxEntry): Promise<EnqueueResult> {
    const mediaBuyIds = distinct(entry.mediaBuyIds)
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
      mediaBuyIds,
      entry.barrier === true,
    ]
    try {
      if (entry.coalesceKey === null && mediaBuyIds.length === 0) {
        // The id's uniqueness is decided under an advisory lock (migration 5): one statement at READ
        // COMMITTED, or a READ COMMITTED transaction of its own when the stores run at another level.
        const isolation = this.#database.policy.isolation
        if (isolation === undefined || isolation === 'read committed')
          await this.#database.run(this.#insert, values)
        else
          await this.#database.transaction(
            'outbox_enqueue',
            (client) => client.query({ name: this.#insert.name, text: this.#insert.text, values }),
            { lockFirst: true },
          )
        return { superseded: [] }
      }
      const schema = this.#database.schema
      return await this.#database.transaction(
        'outbox_enqueue',
        async (client): Promise<EnqueueResult> => {
          if (entry.coalesceKey !== null)
            await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
              JSON.stringify([this.#database.schemaName, 'outbox', entry.destination, entry.coalesceKey]),
            ])
          await this.#lockMediaBuys(client, mediaBuyIds)
          const closed = await this.#closedIn(client, mediaBuyIds)
          if (closed.length > 0) return { superseded: [], closed }
          let superseded: string[] = []
          if (entry.coalesceKey !== null) {
            const { rows } = await client.query<{ id: string }>(
              `WITH superseded AS (
               UPDATE ${schema}.outbox SET state = 'superseded'
                WHERE destination = $1 AND coalesce_key = $2 AND state = 'pending' AND attempts = 0 AND fence IS NULL
               RETURNING id, seq
             ), settled AS (
               DELETE FROM ${schema}.outbox_media_buys m USING superseded WHERE m.entry_seq = superseded.seq
             )
             SELECT id FROM superseded ORDER BY seq`,
              [entry.destination, entry.coalesceKey],
            )
            superseded = rows.map((row) => row.id)
          }
          const inserted = await client.query<{ seq: string }>({
            name: this.#insert.name,
            text: this.#insert.text,
            values,
          })
          if (mediaBuyIds.length > 0)
            await client.query(
              `INSERT INTO ${schema}.outbox_media_buys (media_buy_id, entry_seq)
             SELECT unnest($1::text[]), $2::bigint`,
              [mediaBuyIds, inserted.rows[0]!.seq],
            )
          if (entry.barrier === true && mediaBuyIds.length > 0)
            await client.query(
              `INSERT INTO ${schema}.media_buys_closed (media_buy_id, closed_at, entry_id)
             SELECT unnest($1::text[]), $2::float8, $3::text ON CONFLICT DO NOTHING`,
              [mediaBuyIds, entry.createdAt, entry.id],
            )
          return { superseded }
        },
        { lockFirst: true },
      )
    } catch (error) {
      const cause = StoreError.is(error) ? error.cause : error
      if ((cause as { code?: unknown } | undefined)?.code === '23505') {
        throw new StoreError('store_duplicate_entry', `outbox entry ${entry.id} exists`, { cause })
      }
      throw error
    }
  }

  async lease(now: number, limit: number, leaseSeconds: number): Promise<LeasedOutboxEntry[]> {
    const { rows } = await this.#worker.run<OutboxRow & { fence: string }>(this.#lease, [
      now,
      Math.max(0, Math.floor(limit)),
      leaseSeconds,
    ])
    return rows.map((row) => ({ ...toEntry(row), fence: row.fence }))
  }

  async record(id: string, fence: string, outcome: AttemptOutcome, now: number): Promise<boolean> {
    const delivered = outcome.kind === 'delivered'
    const destination = fenceDestination(fence)
    const { rowCount } = await this.#worker.run(
      destination === undefined ? this.#recordLegacy : this.#record,
      [
        id,
        fence,
        outcome.kind,
        outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
        delivered ? 'success' : outcome.activityStatus,
        outcome.httpStatus ?? null,
        delivered ? null : (outcome.error ?? null),
        now,
        ...(destination === undefined ? [] : [destination]),
      ],
    )
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

  async closedMediaBuys(mediaBuyIds: readonly string[]): Promise<string[]> {
    const ids = distinct(mediaBuyIds)
    if (ids.length === 0) return []
    const { rows } = await this.#database.run<{ media_buy_id: string }>(this.#closedOf, [ids])
    return inOrder(
      ids,
      rows.map((row) => row.media_buy_id),
    )
  }

  async closeMediaBuys(mediaBuyIds: readonly string[], now: number): Promise<string[]> {
    const ids = distinct(mediaBuyIds)
    if (ids.length === 0) return []
    const schema = this.#database.schema
    return this.#database.transaction(
      'outbox_close_media_buys',
      async (client) => {
        await this.#lockMediaBuys(client, ids)
        const { rows } = await client.query<{ media_buy_id: string }>(
          `INSERT INTO ${schema}.media_buys_closed (media_buy_id, closed_at)
         SELECT unnest($1::text[]), $2::float8 ON CONFLICT DO NOTHING RETURNING media_buy_id`,
          [ids, now],
        )
        return inOrder(
          ids,
          rows.map((row) => row.media_buy_id),
        )
      },
      { lockFirst: true },
    )
  }

  /**
   * Expires delivered, failed and superseded entries whose deadline has passed (their activity rows stay), and
   * webhook_activity rows older than {@link ACTIVITY_RETENTION_SECONDS} (30 days, as AdCP requires them kept),
   * by dropping whole time partitions (migration 5): an entry goes with its partition, at most one partition
   * width (six hours) after its deadline, and a partition holding a pending entry is kept. Partitions ahead of
   * `now` are created. Closed media buy records are kept: a late event for a buy whose final report was swept
   * is still refused. Resolves with the outbox entries removed (for a dropped partition, the catalogue's
   * estimate of its rows: nothing is counted); {@link sweepActivity} alone for the activity rows.
   */
  async sweep(now: number): Promise<number> {
    const outbox = await this.maintain(OUTBOX_PARTITIONS, now)
    await this.sweepActivity(now)
    return outbox.rows
  }

  /** Expires webhook_activity rows older than 30 days at `now` (whole partitions); resolves with how many. */
  async sweepActivity(now: number): Promise<number> {
    return (await this.maintain(ACTIVITY_PARTITIONS, now)).rows
  }

  /** Creates the partitions ahead of `now` and drops those past retention (see `partitions.ts`). */
  maintain(table: PartitionedTable, now: number): Promise<Maintenance> {
    return maintainPartitions(this.#database, table, now)
  }
}

/** The destination a fence of `lease` names (`<uuid>:<destination>`); undefined for a bare UUID. */
function fenceDestination(fence: string): string | undefined {
  return typeof fence === 'string' && fence.length > 37 && fence[36] === ':' ? fence.slice(37) : undefined
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
    mediaBuyIds: row.media_buy_ids,
    barrier: row.barrier,
  }
}
