/**
 * Time partitions (migration 5): created ahead of the caller's clock, dropped whole once past retention.
 *
 * Partitions are named `<table>_p<start>` and cover `[start, start + width)` of the table's time column, in the
 * caller's Unix seconds. Maintenance, run by the sweep and on open:
 *
 * - creates the partitions from the one holding `now` to `now + ahead` that are missing: a table of its own
 *   (`LIKE` the parent) with a CHECK of its bounds, the default partition's rows of that range moved into it,
 *   then `ATTACH PARTITION`, which takes SHARE UPDATE EXCLUSIVE on the parent (writers and readers go on) and,
 *   the CHECK proving the bounds, reads only the default partition;
 * - drops each partition whose upper bound is at or before the table's cutoff (`now` for the outbox,
 *   `now - 30 days` for webhook_activity) and that holds nothing the table must keep (a pending outbox entry):
 *   first `DETACH PARTITION`, a catalogue change under ACCESS EXCLUSIVE on the parent for a moment, then
 *   `DROP TABLE` of the detached table, whose unlinking of files (growing with its size) holds no lock anyone
 *   else wants; a table detached but not yet dropped (a process stopped between the two) is dropped by the
 *   next run;
 * - deletes the default partition's own expired rows (rows written outside the partitions, normally none).
 *
 * Every step is its own short transaction under `lock_timeout` (100 ms): a step that would wait behind a long
 * transaction gives up and is tried again by the next sweep, so maintenance never holds the hot path back for
 * longer than that. Processes sweeping at once take turns on a session advisory lock tried without waiting:
 * whoever finds it taken skips maintenance this time.
 */
import type { PoolClient } from 'pg'
import type { Database } from './database.js'
import { quoteIdentifier } from './database.js'
import { toStoreError } from './errors.js'

export interface PartitionedTable {
  /** The partitioned table. */
  readonly table: string
  /** The time column it is partitioned by. */
  readonly column: string
  /** Seconds each partition covers. */
  readonly width: number
  /** Partitions are created up to `now + ahead`. */
  readonly ahead: number
  /** Rows whose time column is at or before `cutoff(now)` are past retention. */
  readonly cutoff: (now: number) => number
  /** The condition (on the table's own columns) that makes a row past the cutoff expired. */
  readonly expired: string
  /** A condition that keeps a partition past its cutoff from being dropped while any of its rows meets it. */
  readonly keep?: string
}

/** What one maintenance run did. */
export interface Maintenance {
  /** Partitions created, by name. */
  readonly created: string[]
  /** Partitions dropped, by name. */
  readonly dropped: string[]
  /** The rows of the partitions dropped, as the catalogue last estimated them, plus the default's rows deleted. */
  readonly rows: number
  /** Whether a step gave up on a lock (tried again next time) or another process was maintaining. */
  readonly deferred: boolean
  /** Milliseconds spent dropping partitions, detaching and dropping (their transactions, BEGIN to COMMIT). */
  readonly dropMs: number
  /** Of which detaching, while the table was locked. */
  readonly detachMs: number
  /** Milliseconds spent deleting the default partition's expired rows. */
  readonly deleteMs: number
}

/** How long a maintenance step may wait for a lock before it gives up until the next sweep. */
export const PARTITION_LOCK_TIMEOUT_MS = 100

/** At most this many partitions are created in one run (a clock far ahead of the last partition). */
const MAX_CREATE = 64

/** The start of the partition holding `time`. */
export const partitionStart = (time: number, width: number) => Math.floor(time / width) * width

const LOCK_NOT_AVAILABLE = '55P03'
const DEADLOCK = '40P01'
const DEPENDENT_OBJECTS = '2BP01'

/**
 * Brings the partitions of `table` in line with `now`: creates those ahead, drops those past retention,
 * deletes the default partition's expired rows.
 */
export async function maintainPartitions(
  database: Database,
  table: PartitionedTable,
  now: number,
): Promise<Maintenance> {
  const created: string[] = []
  const dropped: string[] = []
  let rows = 0
  let deferred = false
  let dropMs = 0
  let detachMs = 0
  let deleteMs = 0
  const done = () => ({ created, dropped, rows, deferred, dropMs, detachMs, deleteMs })
  if (!Number.isFinite(now)) return done()
  const schema = database.schema
  const parent = `${schema}.${quoteIdentifier(table.table)}`
  const fallback = `${schema}.${quoteIdentifier(`${table.table}_default`)}`
  const lockKey = JSON.stringify([database.schemaName, 'partitions', table.table])
  const deferredRun = await maintenanceSession(
    database,
    lockKey,
    `partitions of ${table.table}`,
    async ({ client, step }) => {
      // Tables detached by an earlier run that stopped before dropping them.
      for (const name of await detachedPartitions(client, database.schemaName, [table.table], 'p')) {
        const ok = await step(async () => {
          await client.query(`DROP TABLE ${schema}.${quoteIdentifier(name)}`)
        })
        if (!ok) break
      }

      const existing = await numberedPartitions(client, database.schemaName, table.table, 'p')
      const first = Math.max(0, partitionStart(now, table.width))
      const last = Math.min(
        partitionStart(now + table.ahead, table.width),
        first + (MAX_CREATE - 1) * table.width,
      )
      for (let start = first; start <= last; start += table.width) {
        if (existing.has(start)) continue
        const name = `${table.table}_p${start}`
        const partition = `${schema}.${quoteIdentifier(name)}`
        const end = start + table.width
        const column = quoteIdentifier(table.column)
        const ok = await step(async () => {
          await client.query(
            `CREATE TABLE ${partition} (LIKE ${parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
          )
          await client.query(
            `ALTER TABLE ${partition} ADD CONSTRAINT ${quoteIdentifier(`${name}_bounds`)}
             CHECK (${column} >= ${start} AND ${column} < ${end})`,
          )
          await client.query(
            `WITH moved AS (DELETE FROM ${fallback} WHERE ${column} >= ${start} AND ${column} < ${end} RETURNING *)
           INSERT INTO ${partition} SELECT * FROM moved`,
          )
          await client.query(
            `ALTER TABLE ${parent} ATTACH PARTITION ${partition} FOR VALUES FROM (${start}) TO (${end})`,
          )
        })
        if (!ok) break
        created.push(name)
      }

      const cutoff = table.cutoff(now)
      for (const [start, name] of [...existing].sort((a, b) => a[0] - b[0])) {
        if (start + table.width > cutoff) break
        const partition = `${schema}.${quoteIdentifier(name)}`
        // A partition something keeps is skipped without locking the table (looked at again under the lock).
        const keeps = async () =>
          table.keep !== undefined &&
          (await client.query(`SELECT 1 FROM ${partition} WHERE ${table.keep} LIMIT 1`)).rows.length > 0
        if (await keeps()) continue
        let estimate = 0
        let kept = false
        const began = performance.now()
        const detached = await step(async () => {
          // The parent first, as every writer locks it before a partition: no lock-order inversion.
          await client.query(`LOCK TABLE ${parent} IN ACCESS EXCLUSIVE MODE`)
          if (await keeps()) {
            kept = true
            return
          }
          const tuples = await client.query<{ reltuples: number }>(
            'SELECT reltuples::float8 AS reltuples FROM pg_class WHERE oid = $1::regclass',
            [partition],
          )
          estimate = Math.max(0, Math.round(tuples.rows[0]?.reltuples ?? 0))
          await client.query(`ALTER TABLE ${parent} DETACH PARTITION ${partition}`)
        })
        if (!detached) break
        if (kept) continue
        detachMs += performance.now() - began
        rows += estimate
        // No longer part of the table: its rows are gone for every reader, and dropping it waits for no writer.
        const ok = await step(async () => {
          await client.query(`DROP TABLE ${partition}`)
        })
        dropMs += performance.now() - began
        if (!ok) break
        dropped.push(name)
      }

      const began = performance.now()
      await step(async () => {
        const { rowCount } = await client.query(
          `DELETE FROM ${fallback} WHERE ${quoteIdentifier(table.column)} <= $1 AND ${table.expired}`,
          [cutoff],
        )
        rows += rowCount ?? 0
      })
      deleteMs = performance.now() - began
    },
  )
  deferred ||= deferredRun
  return done()
}

/** A maintenance run's connection, holding the run's turn among processes. */
export interface MaintenanceSession {
  readonly client: PoolClient
  /**
   * Runs `body` in its own READ COMMITTED transaction under the lock timeout; false when it gave up (a lock not
   * had in time, a deadlock, an object another run dropped meanwhile): the run is then deferred, and the next
   * one tries again.
   */
  readonly step: (body: () => Promise<void>) => Promise<boolean>
}

/**
 * Runs `work` on one connection of `database` holding a session advisory lock on `key`, tried without waiting:
 * processes maintaining at once take turns, and whoever finds the key taken skips this run. Resolves with
 * whether the run was deferred (the key was taken, or a step gave up). Errors reject as store errors naming
 * `label`; a connection whose unlock failed is destroyed rather than pooled.
 */
export async function maintenanceSession(
  database: Database,
  key: string,
  label: string,
  work: (session: MaintenanceSession) => Promise<void>,
): Promise<boolean> {
  let deferred = false
  const client = await database.connect(label)
  let broken: Error | undefined
  try {
    const locked = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
      [key],
    )
    if (!locked.rows[0]?.locked) return true
    try {
      const step = async (body: () => Promise<void>): Promise<boolean> => {
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED')
        try {
          await client.query(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`)
          await body()
          await client.query('COMMIT')
          return true
        } catch (error) {
          await client.query('ROLLBACK')
          const code = (error as { code?: unknown }).code
          if (code === LOCK_NOT_AVAILABLE || code === DEADLOCK || code === DEPENDENT_OBJECTS) {
            deferred = true
            return false
          }
          throw error
        }
      }
      await work({ client, step })
    } finally {
      await client
        .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key])
        .catch((error: unknown) => {
          broken = error instanceof Error ? error : new Error(String(error))
        })
    }
    return deferred
  } catch (error) {
    broken ??= error instanceof Error ? error : new Error(String(error))
    throw toStoreError(error, label)
  } finally {
    client.release(broken)
  }
}

/**
 * Tables named as partitions of `tables` (`<table>_<letter><number>`) that are not partitions: detached by a
 * run that stopped before dropping them.
 */
export async function detachedPartitions(
  client: PoolClient,
  schemaName: string,
  tables: readonly string[],
  letter: 'p' | 'g',
): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ $2`,
    [schemaName, `^(${tables.join('|')})_${letter}[0-9]+$`],
  )
  return rows.map((row) => row.name)
}

/** The partitions of `table` named `<table>_<letter><number>` (not its default), by that number. */
export async function numberedPartitions(
  client: PoolClient,
  schemaName: string,
  table: string,
  letter: 'p' | 'g',
): Promise<Map<number, string>> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent
       JOIN pg_namespace n ON n.oid = p.relnamespace
      WHERE n.nspname = $1 AND p.relname = $2`,
    [schemaName, table],
  )
  const found = new Map<number, string>()
  const pattern = new RegExp(`^${table}_${letter}(\\d+)$`)
  for (const { name } of rows) {
    const match = pattern.exec(name)
    if (match) found.set(Number(match[1]), name)
  }
  return found
}
