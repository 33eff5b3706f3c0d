/**
 * The receiver's tables, written once for SQLite and PostgreSQL on the driver of @adwire/sql: on the
 * connection of the @adwire/store-sqlite stores (one file, WAL, synchronous=FULL: an acknowledged delivery's
 * event row is on disk), or in the schema and on the pool of the @adwire/store-postgres stores (every instance
 * pointed at the schema shares registrations, events and the admin token). The dialects differ in the table
 * definitions and their migration (see `migrate`), and in how events are written and expire: on PostgreSQL
 * `receiver_events` is partitioned by time, one to seven days a partition (written through
 * `receiver_events_record`, one row per key across the partitions; expired by dropping partitions), on SQLite
 * it is one table with a unique key (expired by a DELETE in batches). The forwarding queue is the lease queue of @adwire/sql on the event rows.
 */
import { assertSchemaVersion, migratePostgres, migrateSqlite } from '@adwire/service-kit'
import { maintainOwnPartitions, type PartitionedTable } from '@adwire/store-postgres'
import {
  leaseQueue,
  postgresDriver,
  postgresExecutor,
  sqliteDriver,
  type SqlDriver,
  type SqlExecutor,
  type SqlValue,
} from '@adwire/sql'
import type Database from 'better-sqlite3'
import type pg from 'pg'
import {
  EVENT_COLUMNS,
  FAILURE_COLUMNS,
  REGISTRATION_COLUMNS,
  registrationValues,
  toEvent,
  toFailure,
  toForwardJob,
  toRegistration,
  type EventRow,
  type FailureRow,
  type ForwardRow,
  type RegistrationRow,
} from './rows.js'
import {
  ADDED_REGISTRATION_COLUMNS,
  DEFAULT_EVENT_RETENTION_DAYS,
  EVENT_PARTITION_SECONDS,
  eventPartitionSeconds,
  postgresEventsConversion,
  postgresEventsCopy,
  postgresSchema,
  SCHEMA_VERSION,
  SQLITE_SCHEMA,
} from './schema.js'
import type { NewEvent, ReceiverDatabase, RecordedEvent } from './types.js'

/** Where the tables live: the stores' SQLite connection, or their pool and schema. */
export type ReceiverTarget =
  | { readonly kind: 'sqlite'; readonly database: Database.Database }
  | { readonly kind: 'postgres'; readonly pool: pg.Pool; readonly schema: string }

/** How the receiver's own tables are kept. */
export interface ReceiverDatabaseOptions {
  /**
   * How long an event is kept after `received_at`, seconds (default 30 days): past it the sweep drops it
   * (PostgreSQL: with its whole partition, one to seven days wide, so up to that much later; SQLite: deleted
   * in batches), unless it is still waiting for the forwarder (`forward_state` pending, leased or not),
   * which keeps it (and on PostgreSQL its partition) until it is forwarded.
   */
  readonly eventRetentionSeconds?: number
  /** The caller's clock, Unix seconds (default `Date.now() / 1000`): read on open to create partitions ahead. */
  readonly now?: () => number
}

/**
 * PostgreSQL: `receiver_events` by `received_at`, `width` seconds a partition (the table's own, see
 * `eventPartitionSeconds`), created two days ahead.
 */
export const eventPartitions = (retentionSeconds: number, width: number): PartitionedTable => ({
  table: 'receiver_events',
  column: 'received_at',
  width,
  ahead: 2 * EVENT_PARTITION_SECONDS,
  cutoff: (now) => now - retentionSeconds,
  expired: "forward_state <> 'pending'",
  keep: "forward_state = 'pending'",
})

/** SQLite: events deleted per statement (each its own short transaction) by the retention sweep. */
export const EVENT_SWEEP_BATCH = 1000

/** Creates the tables (in one transaction, refusing a database a newer receiver migrated). */
/** Creates or upgrades the tables; resolves with the width of the PostgreSQL event partitions (0 on SQLite). */
async function migrate(target: ReceiverTarget, prefix: string, retentionSeconds: number): Promise<number> {
  if (target.kind === 'sqlite') {
    const { database } = target
    migrateSqlite(database, () => {
      database.exec(SQLITE_SCHEMA)
      // Older tables lack the later registration columns: add them (SQLite has no ADD COLUMN IF NOT EXISTS).
      const columns = database.prepare(`PRAGMA table_info(receiver_registrations)`).all() as {
        name: string
      }[]
      for (const added of ADDED_REGISTRATION_COLUMNS) {
        if (!columns.some((column) => column.name === added))
          database.exec(`ALTER TABLE receiver_registrations ADD COLUMN ${added} TEXT`)
      }
      const row = database
        .prepare(`SELECT value FROM receiver_settings WHERE name = 'schema_version'`)
        .get() as { value: string } | undefined
      assertSchemaVersion('receiver', row?.value, SCHEMA_VERSION)
      database
        .prepare(`INSERT OR REPLACE INTO receiver_settings (name, value) VALUES ('schema_version', ?)`)
        .run(String(SCHEMA_VERSION))
    })
    return 0
  }
  // Serialised across concurrently starting instances with an advisory lock.
  let width = EVENT_PARTITION_SECONDS
  await migratePostgres(target.pool, `adwire_receiver:${target.schema}`, async (client) => {
    const s = prefix.slice(0, -1)
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    // receiver_events of version 3 or older (a plain table): converted in place to the partitioned one.
    const { rows: kinds } = await client.query<{ kind: string }>(
      `SELECT c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = 'receiver_events'`,
      [target.schema],
    )
    const convert = kinds[0]?.kind === 'r'
    if (convert) await client.query(postgresEventsConversion(s))
    await client.query(postgresSchema(s))
    // The partitions' width, chosen once: a table partitioned before it was stored has day partitions.
    const chosen = kinds[0]?.kind === 'p' ? EVENT_PARTITION_SECONDS : eventPartitionSeconds(retentionSeconds)
    await client.query(
      `INSERT INTO ${prefix}receiver_settings (name, value) VALUES ('event_partition_seconds', $1)
       ON CONFLICT (name) DO NOTHING`,
      [String(chosen)],
    )
    const { rows: widths } = await client.query<{ value: string }>(
      `SELECT value FROM ${prefix}receiver_settings WHERE name = 'event_partition_seconds'`,
    )
    width = Number(widths[0]!.value)
    if (convert) await client.query(postgresEventsCopy(s, width))
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM ${prefix}receiver_settings WHERE name = 'schema_version'`,
    )
    assertSchemaVersion('receiver', rows[0]?.value, SCHEMA_VERSION)
    await client.query(
      `INSERT INTO ${prefix}receiver_settings (name, value) VALUES ('schema_version', $1)
       ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
      [String(SCHEMA_VERSION)],
    )
  })
  return width
}

/** The columns of an event row as written, in the order of {@link eventValues}. */
const INSERT_COLUMNS = `registration_id, idempotency_key, sender, operation_id, task_id, task_type, status, terminal,
  received_at, payload, publications, forward_state, forward_next_at`

/** One row's values (booleans as 0/1, which PostgreSQL's boolean reads too). */
const eventValues = (event: NewEvent): SqlValue[] => [
  event.registrationId,
  event.idempotencyKey,
  event.sender,
  event.operationId ?? null,
  event.taskId ?? null,
  event.taskType ?? null,
  event.status ?? null,
  event.terminal ? 1 : 0,
  event.receivedAt,
  event.payload,
  1,
  event.forward ? 'pending' : 'none',
  event.forward ? event.receivedAt : null,
]
const ROW_PLACEHOLDERS = `(${eventValues({} as NewEvent)
  .map(() => '?')
  .join(', ')})`
/** Rows per group statement (13 values each: well under both databases' limits). */
const GROUP_ROWS = 500

/**
 * Creates the tables and returns the database on the stores' connection or pool.
 *
 * @example
 * const stores = openSqliteStores({ path: './data/receiver.sqlite' })
 * const db = await openReceiverDatabase({ kind: 'sqlite', database: stores.database })
 * await db.listRegistrations()
 */
export async function openReceiverDatabase(
  target: ReceiverTarget,
  options: ReceiverDatabaseOptions = {},
): Promise<ReceiverDatabase> {
  const retention = options.eventRetentionSeconds ?? DEFAULT_EVENT_RETENTION_DAYS * 86_400
  if (!(Number.isFinite(retention) && retention > 0))
    throw new RangeError(`eventRetentionSeconds must be a positive number, not ${retention}`)
  const prefix = target.kind === 'sqlite' ? '' : `"${target.schema.replaceAll('"', '""')}".`
  const width = await migrate(target, prefix, retention)
  const partitions = eventPartitions(retention, width)
  // The partitions ahead of the caller's clock (a step that met a lock is left to the first sweep).
  if (target.kind === 'postgres')
    await maintainOwnPartitions(target.pool, target.schema, partitions, options.now?.() ?? Date.now() / 1000)
  // The stores own the connection and the pool: this driver is never closed.
  const driver: SqlDriver =
    target.kind === 'sqlite' ? sqliteDriver(target.database) : postgresDriver(target.pool)
  /** The inbox's open transaction (PostgreSQL: its connection; SQLite has one connection, already in it). */
  const on = (transaction: object | undefined): SqlExecutor =>
    target.kind === 'postgres' && transaction ? postgresExecutor(transaction as pg.PoolClient) : driver
  const settings = `${prefix}receiver_settings`
  const registrations = `${prefix}receiver_registrations`
  const events = `${prefix}receiver_events`
  const failures = `${prefix}receiver_failures`
  const forwarding = leaseQueue(driver, {
    table: events,
    key: 'seq',
    state: 'forward_state',
    attempts: 'forward_attempts',
    leaseUntil: 'forward_lease_until',
    fence: 'forward_fence',
    dueAt: 'forward_next_at',
    error: 'forward_error',
    states: { ready: 'pending', done: 'done' },
    order: 'seq',
    returning: `${EVENT_COLUMNS}, sender, terminal, payload, forward_fence, forward_attempts`,
  })
  // The statements of every delivery, built once (the drivers find their prepared statement by this text).
  const insertEvent = `INSERT INTO ${events} (${INSERT_COLUMNS}) VALUES ${ROW_PLACEHOLDERS}`
  const RECORD_EVENT = `${insertEvent} ON CONFLICT (registration_id, idempotency_key)
             DO UPDATE SET publications = receiver_events.publications + 1
           RETURNING seq, publications`
  const RECORD_TAKEOVER = `${insertEvent} ON CONFLICT (registration_id, idempotency_key) DO NOTHING RETURNING seq, publications`
  const EARLIER_OWNER = `SELECT seq, publications FROM ${events} WHERE registration_id = ? AND idempotency_key = ?`
  // PostgreSQL: one row per key across the partitions (see EVENTS_UNIQUENESS in schema.ts).
  const RECORD_POSTGRES = `SELECT r_registration_id AS registration_id, r_idempotency_key AS idempotency_key,
      r_seq AS seq, r_publications AS publications, r_recovered AS recovered
    FROM ${prefix}receiver_events_record(?::json)`
  /** PostgreSQL: records `group` (one round trip), results in its order. */
  async function recordOnPostgres(db: SqlExecutor, group: readonly NewEvent[]): Promise<RecordedEvent[]> {
    const argument = JSON.stringify(
      group.map((event, n) => ({
        n,
        registration_id: event.registrationId,
        idempotency_key: event.idempotencyKey,
        sender: event.sender,
        operation_id: event.operationId ?? null,
        task_id: event.taskId ?? null,
        task_type: event.taskType ?? null,
        status: event.status ?? null,
        terminal: event.terminal,
        received_at: event.receivedAt,
        payload: event.payload,
        forward: event.forward,
        takeover: event.takeover === true,
      })),
    )
    const rows = await db.all<
      Stored & { registration_id: string; idempotency_key: string; recovered: boolean }
    >(RECORD_POSTGRES, [argument])
    const byKey = new Map(rows.map((row) => [`${row.registration_id}\u0000${row.idempotency_key}`, row]))
    return group.map((event) => {
      const row = byKey.get(`${event.registrationId}\u0000${event.idempotencyKey}`)
      if (!row) throw new Error(`receiver_events returned no row for ${event.idempotencyKey}`)
      return recorded(row, row.recovered)
    })
  }
  /** SQLite: deletes expired events, a batch a statement, yielding to the event loop in between. */
  async function sweepSqliteEvents(cutoff: number): Promise<number> {
    let deleted = 0
    for (;;) {
      const count = await driver.run(
        `DELETE FROM ${events} WHERE seq IN (SELECT seq FROM ${events}
           WHERE received_at <= ? AND forward_state <> 'pending' ORDER BY received_at LIMIT ${EVENT_SWEEP_BATCH})`,
        [cutoff],
      )
      deleted += count
      if (count < EVENT_SWEEP_BATCH) return deleted
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const optionalRegistration = (registrationId: string | undefined) =>
    registrationId === undefined ? '' : ' AND registration_id = ?'

  async function getSetting(name: string): Promise<string | undefined> {
    return (await driver.one<{ value: string }>(`SELECT value FROM ${settings} WHERE name = ?`, [name]))
      ?.value
  }

  type Stored = { seq: number | string; publications: number }
  const recorded = (row: Stored, recovered: boolean): RecordedEvent => ({
    seq: Number(row.seq),
    publications: Number(row.publications),
    recovered,
  })

  const database: ReceiverDatabase = {
    kind: target.kind,
    getSetting,
    async putSettingIfAbsent(name, value) {
      // Once the insert returns, a competing first start's row is committed: the read sees the one value.
      await driver.run(`INSERT INTO ${settings} (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, [
        name,
        value,
      ])
      return (await getSetting(name)) ?? value
    },
    async insertRegistration(record) {
      await driver.run(
        `INSERT INTO ${registrations} (${REGISTRATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        registrationValues(record),
      )
    },
    async getRegistration(id) {
      const row = await driver.one<RegistrationRow>(
        `SELECT ${REGISTRATION_COLUMNS} FROM ${registrations} WHERE id = ?`,
        [id],
      )
      return row ? toRegistration(row) : undefined
    },
    async listRegistrations() {
      const rows = await driver.all<RegistrationRow>(
        `SELECT ${REGISTRATION_COLUMNS} FROM ${registrations} ORDER BY created_at, id`,
      )
      return rows.map(toRegistration)
    },
    async recordEvents(group, transaction) {
      const db = on(transaction)
      if (target.kind === 'postgres') {
        const results: RecordedEvent[] = []
        for (let start = 0; start < group.length; start += GROUP_ROWS)
          results.push(...(await recordOnPostgres(db, group.slice(start, start + GROUP_ROWS))))
        return results
      }
      const results: Array<RecordedEvent | undefined> = new Array(group.length)
      const plain = group.flatMap((event, index) => (event.takeover ? [] : [{ event, index }]))
      // One statement per chunk of the group: rows in array order (so their seqs), each answered with its key.
      for (let start = 0; start < plain.length; start += GROUP_ROWS) {
        const chunk = plain.slice(start, start + GROUP_ROWS)
        const rows = await db.all<Stored & { registration_id: string; idempotency_key: string }>(
          `INSERT INTO ${events} (${INSERT_COLUMNS})
           VALUES ${chunk.map(() => ROW_PLACEHOLDERS).join(', ')}
           ON CONFLICT (registration_id, idempotency_key)
             DO UPDATE SET publications = receiver_events.publications + 1
           RETURNING registration_id, idempotency_key, seq, publications`,
          chunk.flatMap(({ event }) => eventValues(event)),
        )
        const byKey = new Map(rows.map((row) => [`${row.registration_id}\u0000${row.idempotency_key}`, row]))
        for (const { event, index } of chunk) {
          const row = byKey.get(`${event.registrationId}\u0000${event.idempotencyKey}`)
          if (!row) throw new Error(`receiver_events returned no row for ${event.idempotencyKey}`)
          results[index] = recorded(row, false)
        }
      }
      // Takeovers read the earlier owner's row: one at a time (rare).
      for (const [index, event] of group.entries())
        if (event.takeover) results[index] = await database.recordEvent(event, transaction)
      return results as RecordedEvent[]
    },
    async recordEvent(event, transaction) {
      const db = on(transaction)
      if (target.kind === 'postgres') return (await recordOnPostgres(db, [event]))[0]!
      if (!event.takeover) return recorded((await db.one<Stored>(RECORD_EVENT, eventValues(event)))!, false)
      const row = await db.one<Stored>(RECORD_TAKEOVER, eventValues(event))
      if (row) return recorded(row, false)
      // The earlier owner's row (read in a new statement: a concurrent insert is visible once committed).
      const found = await db.one<Stored>(EARLIER_OWNER, [event.registrationId, event.idempotencyKey])
      return recorded(found!, true)
    },
    async listEvents(registrationId, limit) {
      const rows = await driver.all<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM ${events} WHERE registration_id = ? ORDER BY seq DESC LIMIT ?`,
        [registrationId, limit],
      )
      return rows.map(toEvent).reverse()
    },
    async eventsAfter(after, limit, registrationId) {
      const rows = await driver.all<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM ${events} WHERE seq > ?${optionalRegistration(registrationId)}
         ORDER BY seq LIMIT ?`,
        registrationId === undefined ? [after, limit] : [after, registrationId, limit],
      )
      return rows.map(toEvent)
    },
    async recordFailure(failure) {
      const row = await driver.one<FailureRow>(
        `INSERT INTO ${failures} (registration_id, code, http_status, message, at) VALUES (?, ?, ?, ?, ?)
         RETURNING ${FAILURE_COLUMNS}`,
        [failure.registrationId, failure.code, failure.httpStatus, failure.message ?? null, failure.at],
      )
      return toFailure(row!)
    },
    async listFailures(registrationId, limit) {
      const rows = await driver.all<FailureRow>(
        `SELECT ${FAILURE_COLUMNS} FROM ${failures} WHERE registration_id = ? ORDER BY seq DESC LIMIT ?`,
        [registrationId, limit],
      )
      return rows.map(toFailure).reverse()
    },
    async failuresAfter(after, limit, registrationId) {
      const rows = await driver.all<FailureRow>(
        `SELECT ${FAILURE_COLUMNS} FROM ${failures} WHERE seq > ?${optionalRegistration(registrationId)}
         ORDER BY seq LIMIT ?`,
        registrationId === undefined ? [after, limit] : [after, registrationId, limit],
      )
      return rows.map(toFailure)
    },
    async cursor() {
      const row = await driver.one<{ events: number | string; failures: number | string }>(
        `SELECT (SELECT COALESCE(MAX(seq), 0) FROM ${events}) AS events,
                (SELECT COALESCE(MAX(seq), 0) FROM ${failures}) AS failures`,
      )
      return { events: Number(row!.events), failures: Number(row!.failures) }
    },
    async leaseForwarding(now, limit, leaseSeconds) {
      const leased = await forwarding.claim<ForwardRow>({ now, leaseUntil: now + leaseSeconds, limit })
      return leased.map(({ row }) => toForwardJob(row)).sort((a, b) => a.seq - b.seq)
    },
    markForwarded: (seq, fence, now) => forwarding.done(seq, fence, { set: { forwarded_at: now } }),
    markForwardedMany: (jobs, now) =>
      forwarding.doneMany(
        jobs.map((job) => ({ key: job.seq, fence: job.fence })),
        { set: { forwarded_at: now } },
      ),
    retryForwarding: (seq, fence, nextAttemptAt, error) =>
      forwarding.retry(seq, fence, { dueAt: nextAttemptAt, error: error.slice(0, 500) }),
    async releaseForwarding(seq, fence) {
      await forwarding.release(seq, fence)
    },
    async pendingForwards() {
      const row = await driver.one<{ count: number | string }>(
        `SELECT COUNT(*) AS count FROM ${events} WHERE forward_state = 'pending'`,
      )
      return Number(row!.count)
    },
    async forwardingBacklog() {
      const row = await driver.one<{ count: number | string; oldest: number | string | null }>(
        `SELECT COUNT(*) AS count, MIN(received_at) AS oldest FROM ${events} WHERE forward_state = 'pending'`,
      )
      const count = Number(row!.count)
      return row!.oldest === null ? { count } : { count, oldestReceivedAt: Number(row!.oldest) }
    },
    sweep: (before) => driver.run(`DELETE FROM ${failures} WHERE at < ?`, [before]),
    async sweepEvents(now) {
      if (target.kind === 'sqlite') return sweepSqliteEvents(now - retention)
      return (await maintainOwnPartitions(target.pool, target.schema, partitions, now)).rows
    },
  }
  return database
}
