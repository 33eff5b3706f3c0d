/**
 * The receiver's tables on PostgreSQL, in the schema and on the pool of the @adwire/store-postgres stores, so
 * that every instance pointed at the schema shares registrations, events and the admin token. Migration is
 * serialised across concurrently starting instances with an advisory lock.
 */
import { assertSchemaVersion, migratePostgres } from '@adwire/service-kit'
import type pg from 'pg'
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
import { postgresSchema, SCHEMA_VERSION } from './schema.js'
import type { NewEvent, ReceiverDatabase, RecordedEvent } from './types.js'

/** Creates the tables in `schema` (which the stores created) and returns the database on `pool`. */
export async function postgresReceiverDatabase(pool: pg.Pool, schema: string): Promise<ReceiverDatabase> {
  const s = `"${schema.replaceAll('"', '""')}"`
  await migratePostgres(pool, `adwire_receiver:${schema}`, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    await client.query(postgresSchema(s))
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM ${s}.receiver_settings WHERE name = 'schema_version'`,
    )
    assertSchemaVersion('receiver', rows[0]?.value, SCHEMA_VERSION)
    await client.query(
      `INSERT INTO ${s}.receiver_settings (name, value) VALUES ('schema_version', $1)
       ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
      [String(SCHEMA_VERSION)],
    )
  })

  const query = async <Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    on: pg.Pool | pg.PoolClient = pool,
  ) => on.query<Row>(text.replaceAll('$schema.', `${s}.`), values)

  async function getSetting(name: string): Promise<string | undefined> {
    const { rows } = await query<{ value: string }>(
      `SELECT value FROM $schema.receiver_settings WHERE name = $1`,
      [name],
    )
    return rows[0]?.value
  }

  const database: ReceiverDatabase = {
    kind: 'postgres',
    getSetting,
    async putSettingIfAbsent(name, value) {
      // Insert-or-read in one statement: concurrent first starts agree on one value.
      const { rows } = await query<{ value: string }>(
        `WITH inserted AS (
           INSERT INTO $schema.receiver_settings (name, value) VALUES ($1, $2)
           ON CONFLICT (name) DO NOTHING RETURNING value)
         SELECT value FROM inserted UNION ALL
         SELECT value FROM $schema.receiver_settings WHERE name = $1 LIMIT 1`,
        [name, value],
      )
      if (rows[0]) return rows[0].value
      // The competing insert committed after this statement's snapshot: read it now.
      return (await getSetting(name)) ?? value
    },
    async insertRegistration(record) {
      await query(
        `INSERT INTO $schema.receiver_registrations (${REGISTRATION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        registrationValues(record),
      )
    },
    async getRegistration(id) {
      const { rows } = await query<RegistrationRow>(
        `SELECT ${REGISTRATION_COLUMNS} FROM $schema.receiver_registrations WHERE id = $1`,
        [id],
      )
      return rows[0] ? toRegistration(rows[0]) : undefined
    },
    async listRegistrations() {
      const { rows } = await query<RegistrationRow>(
        `SELECT ${REGISTRATION_COLUMNS} FROM $schema.receiver_registrations ORDER BY created_at, id`,
      )
      return rows.map(toRegistration)
    },
    async recordEvents(events, transaction) {
      const on = (transaction as pg.PoolClient | undefined) ?? pool
      const recorded: Array<RecordedEvent | undefined> = new Array(events.length)
      const plain = events.flatMap((event, index) => (event.takeover ? [] : [{ event, index }]))
      if (plain.length > 0) {
        // One statement for the group: the rows in array order, each answered with its key.
        const column = <T>(read: (event: NewEvent) => T) => plain.map(({ event }) => read(event))
        const { rows } = await query<{
          registration_id: string
          idempotency_key: string
          seq: string
          publications: number
        }>(
          `INSERT INTO $schema.receiver_events (registration_id, idempotency_key, sender, operation_id, task_id,
             task_type, status, terminal, received_at, payload, publications, forward_state, forward_next_at)
           SELECT registration_id, idempotency_key, sender, operation_id, task_id, task_type, status, terminal,
             received_at, payload, 1, forward_state, forward_next_at
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
             $8::boolean[], $9::float8[], $10::text[], $11::text[], $12::float8[])
             AS u(registration_id, idempotency_key, sender, operation_id, task_id, task_type, status, terminal,
               received_at, payload, forward_state, forward_next_at)
           ON CONFLICT (registration_id, idempotency_key)
             DO UPDATE SET publications = receiver_events.publications + 1
           RETURNING registration_id, idempotency_key, seq, publications`,
          [
            column((event) => event.registrationId),
            column((event) => event.idempotencyKey),
            column((event) => event.sender),
            column((event) => event.operationId ?? null),
            column((event) => event.taskId ?? null),
            column((event) => event.taskType ?? null),
            column((event) => event.status ?? null),
            column((event) => event.terminal),
            column((event) => event.receivedAt),
            column((event) => event.payload),
            column((event) => (event.forward ? 'pending' : 'none')),
            column((event) => (event.forward ? event.receivedAt : null)),
          ],
          on,
        )
        const byKey = new Map(rows.map((row) => [`${row.registration_id}\u0000${row.idempotency_key}`, row]))
        for (const { event, index } of plain) {
          const row = byKey.get(`${event.registrationId}\u0000${event.idempotencyKey}`)
          if (!row) throw new Error(`receiver_events returned no row for ${event.idempotencyKey}`)
          recorded[index] = { seq: Number(row.seq), publications: Number(row.publications), recovered: false }
        }
      }
      // Takeovers read the earlier owner's row: one at a time (rare).
      for (const [index, event] of events.entries())
        if (event.takeover) recorded[index] = await database.recordEvent(event, transaction)
      return recorded as RecordedEvent[]
    },
    async recordEvent(event, transaction) {
      const on = (transaction as pg.PoolClient | undefined) ?? pool
      const values = [
        event.registrationId,
        event.idempotencyKey,
        event.sender,
        event.operationId ?? null,
        event.taskId ?? null,
        event.taskType ?? null,
        event.status ?? null,
        event.terminal,
        event.receivedAt,
        event.payload,
        event.forward ? 'pending' : 'none',
        event.forward ? event.receivedAt : null,
      ]
      const insert = `INSERT INTO $schema.receiver_events (registration_id, idempotency_key, sender, operation_id,
           task_id, task_type, status, terminal, received_at, payload, publications, forward_state, forward_next_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $12)`
      type Row = { seq: string; publications: number }
      if (!event.takeover) {
        const { rows } = await query<Row>(
          `${insert} ON CONFLICT (registration_id, idempotency_key)
             DO UPDATE SET publications = receiver_events.publications + 1
           RETURNING seq, publications`,
          values,
          on,
        )
        return { seq: Number(rows[0]!.seq), publications: Number(rows[0]!.publications), recovered: false }
      }
      const { rows } = await query<Row>(
        `${insert} ON CONFLICT (registration_id, idempotency_key) DO NOTHING RETURNING seq, publications`,
        values,
        on,
      )
      if (rows[0])
        return { seq: Number(rows[0].seq), publications: Number(rows[0].publications), recovered: false }
      // The earlier owner's row (read in a new statement: a concurrent insert is visible once committed).
      const found = await query<Row>(
        `SELECT seq, publications FROM $schema.receiver_events WHERE registration_id = $1 AND idempotency_key = $2`,
        [event.registrationId, event.idempotencyKey],
        on,
      )
      return {
        seq: Number(found.rows[0]!.seq),
        publications: Number(found.rows[0]!.publications),
        recovered: true,
      }
    },
    async listEvents(registrationId, limit) {
      const { rows } = await query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM $schema.receiver_events WHERE registration_id = $1
         ORDER BY seq DESC LIMIT $2`,
        [registrationId, limit],
      )
      return rows.map(toEvent).reverse()
    },
    async eventsAfter(after, limit, registrationId) {
      const { rows } = await query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM $schema.receiver_events
         WHERE seq > $1 AND ($3::text IS NULL OR registration_id = $3) ORDER BY seq LIMIT $2`,
        [after, limit, registrationId ?? null],
      )
      return rows.map(toEvent)
    },
    async recordFailure(failure) {
      const { rows } = await query<FailureRow>(
        `INSERT INTO $schema.receiver_failures (registration_id, code, http_status, message, at)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${FAILURE_COLUMNS}`,
        [failure.registrationId, failure.code, failure.httpStatus, failure.message ?? null, failure.at],
      )
      return toFailure(rows[0]!)
    },
    async listFailures(registrationId, limit) {
      const { rows } = await query<FailureRow>(
        `SELECT ${FAILURE_COLUMNS} FROM $schema.receiver_failures WHERE registration_id = $1
         ORDER BY seq DESC LIMIT $2`,
        [registrationId, limit],
      )
      return rows.map(toFailure).reverse()
    },
    async failuresAfter(after, limit, registrationId) {
      const { rows } = await query<FailureRow>(
        `SELECT ${FAILURE_COLUMNS} FROM $schema.receiver_failures
         WHERE seq > $1 AND ($3::text IS NULL OR registration_id = $3) ORDER BY seq LIMIT $2`,
        [after, limit, registrationId ?? null],
      )
      return rows.map(toFailure)
    },
    async cursor() {
      const { rows } = await query<{ events: string; failures: string }>(
        `SELECT (SELECT COALESCE(MAX(seq), 0) FROM $schema.receiver_events) AS events,
                (SELECT COALESCE(MAX(seq), 0) FROM $schema.receiver_failures) AS failures`,
      )
      return { events: Number(rows[0]!.events), failures: Number(rows[0]!.failures) }
    },
    async leaseForwarding(now, limit, leaseSeconds) {
      const { rows } = await query<ForwardRow>(
        `UPDATE $schema.receiver_events SET forward_lease_until = $1, forward_fence = $2
         WHERE seq IN (SELECT seq FROM $schema.receiver_events
                       WHERE forward_state = 'pending' AND forward_next_at <= $3
                         AND (forward_lease_until IS NULL OR forward_lease_until <= $3)
                       ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING ${EVENT_COLUMNS}, sender, terminal, payload, forward_fence, forward_attempts`,
        [now + leaseSeconds, newFence(), now, limit],
      )
      return rows.map(toForwardJob).sort((a, b) => a.seq - b.seq)
    },
    async markForwarded(seq, fence, now) {
      const { rowCount } = await query(
        `UPDATE $schema.receiver_events SET forward_state = 'done', forwarded_at = $1,
           forward_attempts = forward_attempts + 1, forward_lease_until = NULL, forward_error = NULL
         WHERE seq = $2 AND forward_fence = $3 AND forward_state = 'pending'`,
        [now, seq, fence],
      )
      return rowCount === 1
    },
    async retryForwarding(seq, fence, nextAttemptAt, error) {
      const { rowCount } = await query(
        `UPDATE $schema.receiver_events SET forward_next_at = $1, forward_error = $2,
           forward_attempts = forward_attempts + 1, forward_lease_until = NULL
         WHERE seq = $3 AND forward_fence = $4 AND forward_state = 'pending'`,
        [nextAttemptAt, error.slice(0, 500), seq, fence],
      )
      return rowCount === 1
    },
    async releaseForwarding(seq, fence) {
      await query(
        `UPDATE $schema.receiver_events SET forward_lease_until = NULL WHERE seq = $1 AND forward_fence = $2`,
        [seq, fence],
      )
    },
    async pendingForwards() {
      const { rows } = await query<{ count: string }>(
        `SELECT COUNT(*) AS count FROM $schema.receiver_events WHERE forward_state = 'pending'`,
      )
      return Number(rows[0]!.count)
    },
    async sweep(before) {
      const { rowCount } = await query(`DELETE FROM $schema.receiver_failures WHERE at < $1`, [before])
      return rowCount ?? 0
    },
  }
  return database
}
