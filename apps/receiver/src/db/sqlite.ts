/**
 * The receiver's tables on SQLite, on the connection of the @adwire/store-sqlite stores (one file, WAL,
 * synchronous=FULL: an acknowledged delivery's event row is on disk). Statements are prepared once.
 */
import { assertSchemaVersion, migrateSqlite } from '@adwire/service-kit'
import type Database from 'better-sqlite3'
import {
  EVENT_COLUMNS,
  FAILURE_COLUMNS,
  newFence,
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
import { ADDED_REGISTRATION_COLUMNS, SCHEMA_VERSION, SQLITE_SCHEMA } from './schema.js'
import type { ReceiverDatabase, RecordedEvent } from './types.js'

/** Creates the tables (in one transaction, refusing a file a newer receiver migrated) and prepares the statements. */
export function sqliteReceiverDatabase(database: Database.Database): ReceiverDatabase {
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

  const statements = {
    putSetting: database.prepare(
      `INSERT INTO receiver_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
    ),
    getSetting: database.prepare(`SELECT value FROM receiver_settings WHERE name = ?`),
    insertRegistration: database.prepare(
      `INSERT INTO receiver_registrations (${REGISTRATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getRegistration: database.prepare(
      `SELECT ${REGISTRATION_COLUMNS} FROM receiver_registrations WHERE id = ?`,
    ),
    listRegistrations: database.prepare(
      `SELECT ${REGISTRATION_COLUMNS} FROM receiver_registrations ORDER BY created_at, id`,
    ),
    recordEvent: database.prepare(
      `INSERT INTO receiver_events (registration_id, idempotency_key, sender, operation_id, task_id, task_type,
         status, terminal, received_at, payload, publications, forward_state, forward_next_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (registration_id, idempotency_key) DO UPDATE SET publications = publications + 1
       RETURNING seq, publications`,
    ),
    recordTakeover: database.prepare(
      `INSERT INTO receiver_events (registration_id, idempotency_key, sender, operation_id, task_id, task_type,
         status, terminal, received_at, payload, publications, forward_state, forward_next_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (registration_id, idempotency_key) DO NOTHING
       RETURNING seq, publications`,
    ),
    findEvent: database.prepare(
      `SELECT seq, publications FROM receiver_events WHERE registration_id = ? AND idempotency_key = ?`,
    ),
    listEvents: database.prepare(
      `SELECT ${EVENT_COLUMNS} FROM receiver_events WHERE registration_id = ? ORDER BY seq DESC LIMIT ?`,
    ),
    eventsAfter: database.prepare(
      `SELECT ${EVENT_COLUMNS} FROM receiver_events WHERE seq > ? ORDER BY seq LIMIT ?`,
    ),
    eventsAfterFor: database.prepare(
      `SELECT ${EVENT_COLUMNS} FROM receiver_events WHERE seq > ? AND registration_id = ? ORDER BY seq LIMIT ?`,
    ),
    recordFailure: database.prepare(
      `INSERT INTO receiver_failures (registration_id, code, http_status, message, at) VALUES (?, ?, ?, ?, ?)
       RETURNING ${FAILURE_COLUMNS}`,
    ),
    listFailures: database.prepare(
      `SELECT ${FAILURE_COLUMNS} FROM receiver_failures WHERE registration_id = ? ORDER BY seq DESC LIMIT ?`,
    ),
    failuresAfter: database.prepare(
      `SELECT ${FAILURE_COLUMNS} FROM receiver_failures WHERE seq > ? ORDER BY seq LIMIT ?`,
    ),
    failuresAfterFor: database.prepare(
      `SELECT ${FAILURE_COLUMNS} FROM receiver_failures WHERE seq > ? AND registration_id = ? ORDER BY seq LIMIT ?`,
    ),
    cursor: database.prepare(
      `SELECT (SELECT COALESCE(MAX(seq), 0) FROM receiver_events) AS events,
              (SELECT COALESCE(MAX(seq), 0) FROM receiver_failures) AS failures`,
    ),
    lease: database.prepare(
      `UPDATE receiver_events SET forward_lease_until = ?, forward_fence = ?
       WHERE seq IN (SELECT seq FROM receiver_events
                     WHERE forward_state = 'pending' AND forward_next_at <= ?
                       AND (forward_lease_until IS NULL OR forward_lease_until <= ?)
                     ORDER BY seq LIMIT ?)
       RETURNING ${EVENT_COLUMNS}, sender, terminal, payload, forward_fence, forward_attempts`,
    ),
    markForwarded: database.prepare(
      `UPDATE receiver_events SET forward_state = 'done', forwarded_at = ?, forward_attempts = forward_attempts + 1,
         forward_lease_until = NULL, forward_error = NULL
       WHERE seq = ? AND forward_fence = ? AND forward_state = 'pending'`,
    ),
    retryForwarding: database.prepare(
      `UPDATE receiver_events SET forward_next_at = ?, forward_error = ?, forward_attempts = forward_attempts + 1,
         forward_lease_until = NULL
       WHERE seq = ? AND forward_fence = ? AND forward_state = 'pending'`,
    ),
    releaseForwarding: database.prepare(
      `UPDATE receiver_events SET forward_lease_until = NULL WHERE seq = ? AND forward_fence = ?`,
    ),
    pendingForwards: database.prepare(
      `SELECT COUNT(*) AS count FROM receiver_events WHERE forward_state = 'pending'`,
    ),
    sweep: database.prepare(`DELETE FROM receiver_failures WHERE at < ?`),
  }
  // better-sqlite3 is synchronous; the interface is async so that PostgreSQL fits behind it.
  const receiverDb: ReceiverDatabase = {
    kind: 'sqlite',
    async putSettingIfAbsent(name, value) {
      statements.putSetting.run(name, value)
      return (statements.getSetting.get(name) as { value: string }).value
    },
    async getSetting(name) {
      return (statements.getSetting.get(name) as { value: string } | undefined)?.value
    },
    async insertRegistration(record) {
      statements.insertRegistration.run(...registrationValues(record))
    },
    async getRegistration(id) {
      const row = statements.getRegistration.get(id) as RegistrationRow | undefined
      return row ? toRegistration(row) : undefined
    },
    async listRegistrations() {
      return (statements.listRegistrations.all() as RegistrationRow[]).map(toRegistration)
    },
    async recordEvents(events) {
      // Synchronous statements: one after the other costs no round trip.
      const recorded: RecordedEvent[] = []
      for (const event of events) recorded.push(await receiverDb.recordEvent(event))
      return recorded
    },
    async recordEvent(event) {
      const values = [
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
        event.forward ? 'pending' : 'none',
        event.forward ? event.receivedAt : null,
      ]
      type Row = { seq: number; publications: number }
      let row = (event.takeover ? statements.recordTakeover : statements.recordEvent).get(...values) as
        Row | undefined
      const recovered = row === undefined
      row ??= statements.findEvent.get(event.registrationId, event.idempotencyKey) as Row
      return { seq: Number(row.seq), publications: Number(row.publications), recovered }
    },
    async listEvents(registrationId, limit) {
      return (statements.listEvents.all(registrationId, limit) as EventRow[]).map(toEvent).reverse()
    },
    async eventsAfter(after, limit, registrationId) {
      const rows = registrationId
        ? statements.eventsAfterFor.all(after, registrationId, limit)
        : statements.eventsAfter.all(after, limit)
      return (rows as EventRow[]).map(toEvent)
    },
    async recordFailure(failure) {
      return toFailure(
        statements.recordFailure.get(
          failure.registrationId,
          failure.code,
          failure.httpStatus,
          failure.message ?? null,
          failure.at,
        ) as FailureRow,
      )
    },
    async listFailures(registrationId, limit) {
      return (statements.listFailures.all(registrationId, limit) as FailureRow[]).map(toFailure).reverse()
    },
    async failuresAfter(after, limit, registrationId) {
      const rows = registrationId
        ? statements.failuresAfterFor.all(after, registrationId, limit)
        : statements.failuresAfter.all(after, limit)
      return (rows as FailureRow[]).map(toFailure)
    },
    async cursor() {
      const row = statements.cursor.get() as { events: number; failures: number }
      return { events: Number(row.events), failures: Number(row.failures) }
    },
    async leaseForwarding(now, limit, leaseSeconds) {
      const rows = statements.lease.all(now + leaseSeconds, newFence(), now, now, limit) as ForwardRow[]
      return rows.map(toForwardJob).sort((a, b) => a.seq - b.seq)
    },
    async markForwarded(seq, fence, now) {
      return statements.markForwarded.run(now, seq, fence).changes === 1
    },
    async retryForwarding(seq, fence, nextAttemptAt, error) {
      return statements.retryForwarding.run(nextAttemptAt, error.slice(0, 500), seq, fence).changes === 1
    },
    async releaseForwarding(seq, fence) {
      statements.releaseForwarding.run(seq, fence)
    },
    async pendingForwards() {
      return Number((statements.pendingForwards.get() as { count: number }).count)
    },
    async sweep(before) {
      return statements.sweep.run(before).changes
    },
  }
  return receiverDb
}
