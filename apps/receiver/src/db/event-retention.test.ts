/**
 * Events expire by time (schema version 4): past `eventRetentionSeconds` the sweep drops them (PostgreSQL:
 * their day partitions, whole; SQLite: deleted in batches), except those still waiting for the forwarder. One
 * row per (registration, key) still holds on partitioned PostgreSQL, concurrently too, and a database created
 * by version 3 is converted in place.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { EVENT_SWEEP_BATCH } from './database.js'
import { openStorage, type Storage } from './open.js'
import { postgresSchemaV3 } from './schema-v3.fixture.js'
import type { NewEvent } from './types.js'

const postgresUrl = await resolveTestPostgresUrl()
const schemas: string[] = []
const newSchema = () => {
  const schema = `adwire_evret_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  schemas.push(schema)
  return schema
}

const DAY = 86_400
/** A day boundary: partitions cover [T0 + n days, T0 + n + 1 days). */
const T0 = 1_776_470_400

const event = (key: string, receivedAt: number, extra: Partial<NewEvent> = {}): NewEvent => ({
  registrationId: 'reg_1',
  sender: 'rfc9421:https://seller.example.com',
  idempotencyKey: key,
  operationId: 'op_1',
  status: 'completed',
  terminal: true,
  receivedAt,
  payload: `{"idempotency_key":"${key}"}`,
  forward: false,
  ...extra,
})

const keys = async (storage: Storage) =>
  (await storage.db.eventsAfter(0, 10_000)).map((row) => row.idempotencyKey).sort()

function contract(name: string, open: (now: () => number) => Promise<Storage>) {
  describe(`event retention on ${name}`, () => {
    it('expires events past retention, keeps those still to forward until forwarded, and counts re-deliveries of kept ones', async () => {
      let clock = T0 + 60
      const storage = await open(() => clock)
      try {
        // Day 0: two events; day 1: one still to forward (alone: PostgreSQL keeps its whole partition); day 2.
        await storage.db.recordEvent(event('old', T0 + 100))
        await storage.db.recordEvent(event('old-2', T0 + 200))
        await storage.db.recordEvent(event('old-forward', T0 + DAY + 100, { forward: true }))
        await storage.db.recordEvent(event('recent', T0 + 2 * DAY + 100))

        // Within retention nothing goes.
        clock = T0 + DAY + 50
        await storage.db.sweepEvents(clock)
        expect(await keys(storage)).toEqual(['old', 'old-2', 'old-forward', 'recent'])

        // A re-delivery of a key still kept is a second publication of the same row, as before.
        const again = await storage.db.recordEvent(event('old', T0 + DAY + 300))
        expect(again.publications).toBe(2)
        expect(again.recovered).toBe(false)
        const takeover = await storage.db.recordEvent(event('old', T0 + DAY + 301, { takeover: true }))
        expect(takeover).toEqual({ seq: again.seq, publications: 2, recovered: true })

        // Three days on, retention one day: days 0 and 1 expire, but the event still to forward stays.
        clock = T0 + 3 * DAY + 10
        await storage.db.sweepEvents(clock)
        expect(await keys(storage)).toEqual(['old-forward', 'recent'])
        expect(await storage.db.pendingForwards()).toBe(1)

        // Forwarded (leased, then marked), it goes at the next sweep.
        const [job] = await storage.db.leaseForwarding(clock, 10, 30)
        expect(job?.idempotencyKey).toBe('old-forward')
        expect(await storage.db.markForwarded(job!.seq, job!.fence, clock)).toBe(true)
        await storage.db.sweepEvents(clock + 1)
        expect(await keys(storage)).toEqual(['recent'])

        // Once expired, the key is new again: a re-delivery is stored as a first publication.
        const fresh = await storage.db.recordEvent(event('old', clock + 2))
        expect(fresh).toMatchObject({ publications: 1, recovered: false })
        expect(fresh.seq).toBeGreaterThan(again.seq)
      } finally {
        await storage.close()
      }
    })
  })
}

contract('SQLite', (now) =>
  openStorage(
    { kind: 'sqlite', path: path.join(mkdtempSync(path.join(tmpdir(), 'adwire-evret-')), 'r.sqlite') },
    { eventRetentionSeconds: DAY, now },
  ),
)

describe('SQLite retention sweep', () => {
  it('deletes in batches until every expired event is gone, leaving pending ones and a usable index', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-evret-')), 'r.sqlite')
    const storage = await openStorage({ kind: 'sqlite', path: file }, { eventRetentionSeconds: DAY })
    try {
      const count = EVENT_SWEEP_BATCH * 2 + 17
      const group = Array.from({ length: count }, (_, index) =>
        event(`k${index}`, T0 + index / 100, { forward: index % 500 === 0 }),
      )
      for (let start = 0; start < group.length; start += 400)
        await storage.db.recordEvents(group.slice(start, start + 400))
      const pending = group.filter((row) => row.forward).length
      expect(await storage.db.sweepEvents(T0 + 2 * DAY)).toBe(count - pending)
      expect(await storage.db.pendingForwards()).toBe(pending)
      expect((await storage.db.eventsAfter(0, 10_000)).length).toBe(pending)
    } finally {
      await storage.close()
    }
  })
})

describe.skipIf(!postgresUrl)('PostgreSQL', () => {
  const run = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: postgresUrl! })
    await client.connect()
    try {
      return await work(client)
    } finally {
      await client.end()
    }
  }
  const partitions = (schema: string) =>
    run(async (client) =>
      (
        await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
            WHERE n.nspname = $1 AND p.relname = 'receiver_events' ORDER BY 1`,
          [schema],
        )
      ).rows.map((row) => row.name),
    )

  afterAll(async () => {
    await run(async (client) => {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    })
  })

  contract('PostgreSQL', (now) =>
    openStorage(
      { kind: 'postgres', connectionString: postgresUrl!, schema: newSchema() },
      { eventRetentionSeconds: DAY, now },
    ),
  )

  it('drops whole day partitions past retention, keeping one that holds an event still to forward', async () => {
    const schema = newSchema()
    let clock = T0 + 60
    const storage = await openStorage(
      { kind: 'postgres', connectionString: postgresUrl!, schema },
      { eventRetentionSeconds: DAY, now: () => clock },
    )
    try {
      // Opened at T0: the day holding it and the two ahead.
      expect(await partitions(schema)).toEqual([
        'receiver_events_default',
        `receiver_events_p${T0}`,
        `receiver_events_p${T0 + DAY}`,
        `receiver_events_p${T0 + 2 * DAY}`,
      ])
      await storage.db.recordEvent(event('a', T0 + 10))
      await storage.db.recordEvent(event('b', T0 + 20, { forward: true }))
      await storage.db.recordEvent(event('c', T0 + DAY + 10))
      clock = T0 + 3 * DAY
      const expired = await storage.db.sweepEvents(clock)
      expect(expired).toBeGreaterThanOrEqual(0)
      // The first day holds b (pending): kept; the second day is dropped; three days ahead are created.
      expect(await partitions(schema)).toEqual([
        'receiver_events_default',
        `receiver_events_p${T0}`,
        `receiver_events_p${T0 + 2 * DAY}`,
        `receiver_events_p${T0 + 3 * DAY}`,
        `receiver_events_p${T0 + 4 * DAY}`,
        `receiver_events_p${T0 + 5 * DAY}`,
      ])
      expect(await keys(storage)).toEqual(['a', 'b'])
      const [job] = await storage.db.leaseForwarding(clock, 10, 30)
      await storage.db.markForwarded(job!.seq, job!.fence, clock)
      await storage.db.sweepEvents(clock)
      expect(await partitions(schema)).not.toContain(`receiver_events_p${T0}`)
      expect(await keys(storage)).toEqual([])
    } finally {
      await storage.close()
    }
  })

  it('sizes partitions by the retention the table was created with: a quarter of it, one to seven days, kept on reopening', async () => {
    const WEEK = 7 * DAY
    /** A seven-day boundary. */
    const W0 = Math.floor(T0 / WEEK) * WEEK
    const schema = newSchema()
    const clock = W0 + 60
    const target = { kind: 'postgres', connectionString: postgresUrl!, schema } as const
    let storage = await openStorage(target, { eventRetentionSeconds: 30 * DAY, now: () => clock })
    try {
      // 30 days: seven-day partitions (30 / 4 = 7.5 days, at most 7); two days ahead fall in the first.
      expect(await partitions(schema)).toEqual(['receiver_events_default', `receiver_events_p${W0}`])
      await storage.db.recordEvent(event('a', W0 + 10))
    } finally {
      await storage.close()
    }
    // Reopened three days on with a day's retention, the table keeps its width: no day partition is made (it
    // would overlap the week's), and the week holding the clock still holds the key.
    storage = await openStorage(target, { eventRetentionSeconds: DAY, now: () => W0 + 3 * DAY })
    try {
      expect(await partitions(schema)).toEqual(['receiver_events_default', `receiver_events_p${W0}`])
      // A re-delivery of a kept key still counts on its row.
      const again = await storage.db.recordEvent(event('a', W0 + 3 * DAY))
      expect(again.publications).toBe(2)
    } finally {
      await storage.close()
    }
  })

  it('keeps one row per key across partitions under concurrent writers, with and without a transaction', async () => {
    const schema = newSchema()
    const storage = await openStorage({ kind: 'postgres', connectionString: postgresUrl!, schema })
    const pool = new pg.Pool({ connectionString: postgresUrl!, max: 12 })
    try {
      const now = Date.now() / 1000
      // Twelve writers of one new key at once, each its own statement (the 'claims' publication path).
      const results = await Promise.all(
        Array.from({ length: 12 }, () => storage.db.recordEvent(event('same', now))),
      )
      expect(new Set(results.map((row) => row.seq)).size).toBe(1)
      expect(results.map((row) => row.publications).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 12 }, (_, index) => index + 1),
      )
      // A key stored in an older partition is found from a write that lands in a newer one.
      const older = await storage.db.recordEvent(event('across', now - 1.5 * DAY))
      const newer = await storage.db.recordEvent(event('across', now))
      expect(newer).toEqual({ seq: older.seq, publications: 2, recovered: false })

      // A writer inside an open transaction (the inbox's) holds the key: a second one waits for its commit.
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const first = await storage.db.recordEvent(event('held', now), client)
        let secondDone = false
        const second = storage.db.recordEvent(event('held', now)).then((row) => {
          secondDone = true
          return row
        })
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(secondDone).toBe(false)
        await client.query('COMMIT')
        expect(await second).toEqual({ seq: first.seq, publications: 2, recovered: false })
      } finally {
        client.release()
      }
      const rows = await run(
        async (c) =>
          (
            await c.query<{ key: string; count: string }>(
              `SELECT idempotency_key AS key, count(*) AS count FROM "${schema}".receiver_events
                GROUP BY 1 ORDER BY 1`,
            )
          ).rows,
      )
      expect(rows).toEqual([
        { key: 'across', count: '1' },
        { key: 'held', count: '1' },
        { key: 'same', count: '1' },
      ])
    } finally {
      await pool.end()
      await storage.close()
    }
  })

  it('converts a version 3 database in place: rows, seq values and sequence, publications, dedup', async () => {
    const schema = newSchema()
    const s = `"${schema}"`
    const now = Date.now() / 1000
    await run(async (client) => {
      await client.query(`CREATE SCHEMA ${s}`)
      await client.query(postgresSchemaV3(s))
      await client.query(`INSERT INTO ${s}.receiver_settings (name, value) VALUES ('schema_version', '3')`)
      const insert = `INSERT INTO ${s}.receiver_events (registration_id, idempotency_key, sender, operation_id,
          terminal, received_at, payload, publications, forward_state, forward_next_at)
        VALUES ($1, $2, 'seller', 'op', true, $3, $4, $5, $6, $7)`
      await client.query(insert, ['reg_1', 'k1', now - 10 * DAY, '{"a":1}', 1, 'done', null])
      await client.query(insert, ['reg_1', 'k2', now - DAY, '{"a":2}', 3, 'none', null])
      await client.query(insert, ['reg_2', 'k1', now - 60, '{"a":3}', 1, 'pending', now - 60])
      await client.query(insert, ['reg_2', 'gone', now - 30, '{"a":4}', 1, 'none', null])
      // The identity has handed out a seq that no row holds any more: the new table must not reuse it.
      await client.query(`DELETE FROM ${s}.receiver_events WHERE idempotency_key = 'gone'`)
    })
    const before = await run(
      async (client) =>
        (
          await client.query(
            `SELECT seq::int, registration_id, idempotency_key, publications, forward_state, payload
               FROM ${s}.receiver_events ORDER BY seq`,
          )
        ).rows,
    )
    expect(before.map((row) => row.seq)).toEqual([1, 2, 3])

    const storage = await openStorage({ kind: 'postgres', connectionString: postgresUrl!, schema })
    try {
      const after = await run(
        async (client) =>
          (
            await client.query(
              `SELECT seq::int, registration_id, idempotency_key, publications, forward_state, payload
                 FROM ${s}.receiver_events ORDER BY seq`,
            )
          ).rows,
      )
      expect(after).toEqual(before)
      const kinds = await run(
        async (client) =>
          (
            await client.query<{ relname: string; relkind: string }>(
              `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relname LIKE 'receiver_events%' AND c.relkind IN ('r', 'p')
                ORDER BY 1`,
              [schema],
            )
          ).rows,
      )
      expect(kinds.find((row) => row.relname === 'receiver_events')?.relkind).toBe('p')
      expect(kinds.some((row) => row.relname === 'receiver_events_v3')).toBe(false)
      // The old rows went into partitions of their own days, not the default.
      const inDefault = await run(
        async (client) =>
          (await client.query(`SELECT count(*)::int AS n FROM ${s}.receiver_events_default`)).rows[0].n,
      )
      expect(inDefault).toBe(0)
      expect(await storage.db.getSetting('schema_version')).toBe('4')
      expect(await storage.db.pendingForwards()).toBe(1)

      // The next seq continues after the old identity's last (4, deleted), not after the last row.
      const fresh = await storage.db.recordEvent(event('k3', now))
      expect(fresh).toEqual({ seq: 5, publications: 1, recovered: false })
      // Copied keys still dedupe: a second publication counted on the copied row, a takeover recovered.
      expect(await storage.db.recordEvent(event('k2', now))).toEqual({
        seq: 2,
        publications: 4,
        recovered: false,
      })
      expect(
        await storage.db.recordEvent(event('k1', now, { registrationId: 'reg_2', takeover: true })),
      ).toEqual({ seq: 3, publications: 1, recovered: true })
    } finally {
      await storage.close()
    }
    // Opened again: nothing converted twice.
    const again = await openStorage({ kind: 'postgres', connectionString: postgresUrl!, schema })
    try {
      expect((await again.db.eventsAfter(0, 100)).map((row) => row.seq)).toEqual([1, 2, 3, 5])
    } finally {
      await again.close()
    }
  })
})
