/**
 * Expiry of the reference receiver's events at a steady rate, on a simulated clock: `receiver_events` fed
 * `rate` events a simulated hour for 48 hours (recorded in groups of 50 as the inbox writes them, each queued
 * for the sink and forwarded within the hour), swept every simulated hour with a retention of one day, with
 * the bytes the table takes at hour 24 and hour 48. PostgreSQL expires them by dropping day partitions,
 * SQLite by DELETE sweeps in batches.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { openStorage, type ReceiverDatabase } from '@adwire/app-receiver'
import pg from 'pg'
import { dropSchema, freshSchema } from '../src/receiver-support.js'

export interface SimulatedEvents {
  /** Bytes at the end of hour 24 and hour 48. */
  readonly bytes: { readonly at24: number; readonly at48: number }
  /** Events kept at the end of hour 24 and hour 48. */
  readonly rows: { readonly at24: number; readonly at48: number }
  /** Events written. */
  readonly events: number
  /** Milliseconds of all the hourly sweeps together, and the slowest one. */
  readonly sweepMs: number
  readonly slowestSweepMs: number
  /** Milliseconds spent recording the events (groups of 50). */
  readonly recordMs: number
}

const HOUR = 3_600
const GROUP = 50

/** A task envelope of the soak's mix, about 600 bytes. */
const payloadOf = (key: string, index: number) =>
  JSON.stringify({
    idempotency_key: key,
    operation_id: `op_bench_${index % 97}`,
    task_id: `task_${key}`,
    task_type: 'create_media_buy',
    status: index % 4 === 2 ? 'completed' : 'working',
    timestamp: '2026-11-29T00:00:00Z',
    result:
      index % 4 === 2
        ? { media_buy_id: `mb_${key}`, packages: [{ package_id: 'pkg_1', status: 'active' }] }
        : undefined,
    message: 'x'.repeat(300),
  })

/**
 * Runs the 48 simulated hours from `start` on `db`; `bytes()` is what the events take now, `rows()` how many
 * are kept.
 */
export async function simulateEvents(
  db: ReceiverDatabase,
  bytes: () => Promise<number>,
  rows: () => Promise<number>,
  options: { readonly start: number; readonly rate: number; readonly tag: string },
): Promise<SimulatedEvents> {
  const { start, rate, tag } = options
  let at24 = 0
  let rowsAt24 = 0
  let sweepMs = 0
  let slowestSweepMs = 0
  let recordMs = 0
  let events = 0
  for (let hour = 0; hour < 48; hour += 1) {
    for (let first = 0; first < rate; first += GROUP) {
      const now = start + hour * HOUR + (first / rate) * HOUR
      const group = []
      for (let index = first; index < Math.min(rate, first + GROUP); index += 1) {
        const key = `whk_${tag}_${hour}_${index}_0000000000`
        group.push({
          registrationId: `reg_${index % 4}`,
          sender: 'rfc9421:https://seller.example',
          idempotencyKey: key,
          operationId: `op_bench_${index % 97}`,
          taskId: `task_${key}`,
          taskType: 'create_media_buy',
          status: 'working',
          terminal: index % 4 === 2,
          receivedAt: now,
          payload: payloadOf(key, index),
          forward: true,
        })
      }
      const began = performance.now()
      await db.recordEvents(group)
      recordMs += performance.now() - began
      events += group.length
      const jobs = await db.leaseForwarding(now, GROUP, 30)
      await db.markForwardedMany(jobs, now + 0.1)
    }
    const began = performance.now()
    await db.sweepEvents(start + (hour + 1) * HOUR)
    const took = performance.now() - began
    sweepMs += took
    slowestSweepMs = Math.max(slowestSweepMs, took)
    if (hour === 23) {
      at24 = await bytes()
      rowsAt24 = await rows()
    }
  }
  return {
    bytes: { at24, at48: await bytes() },
    rows: { at24: rowsAt24, at48: await rows() },
    events,
    sweepMs,
    slowestSweepMs,
    recordMs,
  }
}

/** Events are kept one day: hour 48 holds what hour 24 did. */
const EVENT_RETENTION = 86_400
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(2)} MB`
const summary = (result: SimulatedEvents) =>
  `${result.events} events recorded in ${result.recordMs.toFixed(0)} ms (${((result.recordMs * 1000) / result.events).toFixed(0)} µs an event, groups of 50), ` +
  `${result.rows.at24} and ${result.rows.at48} kept at hours 24 and 48, hourly sweeps taking ${result.sweepMs.toFixed(0)} ms in all, slowest ${result.slowestSweepMs.toFixed(0)} ms`

/** `[expiry postgres receiver_events]`: day partitions dropped past retention. */
export async function expiryPostgresReceiverEvents(
  postgresUrl: string,
  options: { readonly start: number; readonly rate: number },
): Promise<void> {
  const schema = freshSchema('adwire_bench_events')
  const storage = await openStorage(
    { kind: 'postgres', connectionString: postgresUrl, schema },
    { eventRetentionSeconds: EVENT_RETENTION, now: () => options.start },
  )
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  try {
    const bytes = async () => {
      const { rows } = await client.query<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree($1::regclass) WHERE isleaf`,
        [`"${schema}".receiver_events`],
      )
      return Number(rows[0]!.bytes)
    }
    const rows = async () =>
      Number(
        (await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".receiver_events`)).rows[0]!
          .n,
      )
    const result = await simulateEvents(storage.db, bytes, rows, { ...options, tag: 'pg' })
    console.log(
      `\n[expiry postgres receiver_events] ${options.rate} events a simulated hour for 48 h, each forwarded, kept 1 day, day partitions dropped: ` +
        `bytes at hour 24 ${mb(result.bytes.at24)}, at hour 48 ${mb(result.bytes.at48)}; ${summary(result)}`,
    )
  } finally {
    await client.end()
    await storage.close()
    await dropSchema(postgresUrl, schema)
  }
}

/** `[expiry sqlite receiver_events]`: DELETE sweeps in batches. */
export async function expirySqliteReceiverEvents(options: {
  readonly start: number
  readonly rate: number
}): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'adwire-events-expiry-'))
  const file = join(directory, 'receiver.sqlite')
  const storage = await openStorage(
    { kind: 'sqlite', path: file },
    { eventRetentionSeconds: EVENT_RETENTION },
  )
  // A second connection reads the pages the file holds (WAL included) and those free for reuse.
  const reader = new DatabaseSync(file, { readOnly: true })
  const scalar = (sql: string) => Number(Object.values(reader.prepare(sql).get()!)[0])
  const pragma = (name: string) => scalar(`PRAGMA ${name}`)
  let inUse = { at24: 0, at48: 0 }
  try {
    const bytes = async () => {
      const size = pragma('page_size')
      const used = (pragma('page_count') - pragma('freelist_count')) * size
      inUse = inUse.at24 === 0 ? { at24: used, at48: 0 } : { ...inUse, at48: used }
      return pragma('page_count') * size
    }
    const rows = async () => scalar('SELECT count(*) FROM receiver_events')
    const result = await simulateEvents(storage.db, bytes, rows, { ...options, tag: 'sqlite' })
    console.log(
      `[expiry sqlite receiver_events] the same, DELETE sweeps in batches of 1,000: file bytes at hour 24 ${mb(result.bytes.at24)}, at hour 48 ${mb(result.bytes.at48)} ` +
        `(pages in use ${mb(inUse.at24)} and ${mb(inUse.at48)}); ${summary(result)}`,
    )
  } finally {
    reader.close()
    await storage.close()
    rmSync(directory, { recursive: true, force: true })
  }
}
