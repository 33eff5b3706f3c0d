/**
 * Generations (migration 6): claims, terminal records and replay nonces expire by dropping whole partitions.
 *
 * Rows go to the partition of their family's current generation (see `schema-v6.ts` for why and for the
 * decisions' side). Maintenance, run by the sweep and on open, for one family:
 *
 * - creates the partitions (rows and counters) of the current generation and the two after it that are
 *   missing: a table of its own (`LIKE` the parent), then `ATTACH PARTITION`, which takes SHARE UPDATE
 *   EXCLUSIVE on the parent (writers and readers go on);
 * - rotates once the current generation is `seconds` old (by the caller's clock), the partitions of the next
 *   two generations existing: under the family's advisory key taken exclusively (`pg_advisory_xact_lock`),
 *   which waits for the decisions holding it shared to commit and holds the next ones back until it commits,
 *   it records the next generation in `generation_clock` (for the snapshot check of REPEATABLE READ and
 *   SERIALIZABLE decisions) and sets the family's sequence to it;
 * - drops each partition of a generation older than the current one whose rows have all expired
 *   (`max(expires_at)`, read from the expiry index: the cost does not grow with the rows), with its counters'
 *   partition: `DETACH PARTITION` under ACCESS EXCLUSIVE on the parents for a moment, then `DROP TABLE`; a
 *   table detached but not yet dropped (a process stopped between the two) is dropped by the next run.
 *
 * Every step is its own short transaction under `lock_timeout` (100 ms, migration 5's): a step that would wait
 * behind a long transaction gives up and is tried again by the next sweep, so maintenance never holds the hot
 * path back for longer than that. Processes maintaining at once take turns on a session advisory lock tried
 * without waiting: whoever finds it taken skips maintenance this time.
 *
 * The generation's length: claims and terminal records rotate every 6 hours (a quarter of the receiver's 24 h
 * retention: the rows held stay within retention + 6 h of traffic, and a decision probes about six
 * partitions), nonces every hour (a nonce lives the replay window, minutes: about three partitions).
 */
import type { Database } from './database.js'
import { quoteIdentifier } from './database.js'
import { detachedPartitions, maintenanceSession, numberedPartitions } from './partitions.js'

/** One family of tables sharing a generation sequence. */
export interface GenerationFamily {
  /** The family's name in `generation_clock` and in its advisory key. */
  readonly family: 'claims' | 'terminals' | 'replay'
  /** The sequence holding the current generation. */
  readonly sequence: string
  /** The table of the rows, with `expires_at`. */
  readonly records: string
  /** The rows' counters per generation, when the family counts them (the column summed for the rows held). */
  readonly counters?: { readonly table: string; readonly count: string }
  /** Seconds a generation is current before maintenance rotates it. */
  readonly seconds: number
}

export const CLAIM_GENERATIONS: GenerationFamily = {
  family: 'claims',
  sequence: 'claims_generation',
  records: 'claims',
  counters: { table: 'claim_scope_counts', count: 'records' },
  seconds: 21_600,
}

export const TERMINAL_GENERATIONS: GenerationFamily = {
  family: 'terminals',
  sequence: 'terminals_generation',
  records: 'terminals',
  seconds: 21_600,
}

export const REPLAY_GENERATIONS: GenerationFamily = {
  family: 'replay',
  sequence: 'replay_generation',
  records: 'replay_nonces',
  counters: { table: 'replay_key_counts', count: 'entries' },
  seconds: 3_600,
}

/** What one maintenance run of a family did. */
export interface GenerationMaintenance {
  /** The current generation afterwards (0 when another process was maintaining). */
  readonly generation: number
  /** Whether this run advanced the generation. */
  readonly rotated: boolean
  /** Partitions created, by name. */
  readonly created: string[]
  /** Partitions dropped, by name (rows and counters). */
  readonly dropped: string[]
  /** The rows of the dropped generations: their counters' sum, or the catalogue's estimate without counters. */
  readonly rows: number
  /** Whether a step gave up on a lock (tried again next time) or another process was maintaining. */
  readonly deferred: boolean
  /** Milliseconds the rotation's transaction took (BEGIN to COMMIT), 0 without a rotation. */
  readonly rotateMs: number
  /** Milliseconds spent dropping partitions, detaching and dropping. */
  readonly dropMs: number
  /** Of which detaching, while the tables were locked. */
  readonly detachMs: number
}

/** How many generations after the current one have their partitions. */
const AHEAD = 2

/** The text whose hash is the family's advisory key, as the functions of migration 6 write it. */
export const generationLockKey = (database: Database, family: GenerationFamily) =>
  `${database.schema}/${family.family}`

/** Creates, rotates and drops the generations of `family` for the caller's clock `now`. */
export async function maintainGenerations(
  database: Database,
  family: GenerationFamily,
  now: number,
): Promise<GenerationMaintenance> {
  const created: string[] = []
  const dropped: string[] = []
  let generation = 0
  let rotated = false
  let rows = 0
  let deferred = false
  let rotateMs = 0
  let dropMs = 0
  let detachMs = 0
  const done = () => ({ generation, rotated, created, dropped, rows, deferred, rotateMs, dropMs, detachMs })
  if (!Number.isFinite(now)) return done()
  const schema = database.schema
  const tables = [family.records, ...(family.counters ? [family.counters.table] : [])]
  const qualified = (name: string) => `${schema}.${quoteIdentifier(name)}`
  const sessionKey = JSON.stringify([database.schemaName, 'generations', family.family])
  const deferredRun = await maintenanceSession(
    database,
    sessionKey,
    `generations of ${family.family}`,
    async ({ client, step }) => {
      // Tables detached by an earlier run that stopped before dropping them.
      for (const name of await detachedPartitions(client, database.schemaName, tables, 'g')) {
        const ok = await step(async () => {
          await client.query(`DROP TABLE ${qualified(name)}`)
        })
        if (!ok) break
      }

      const partitions = new Map<string, Map<number, string>>()
      for (const table of tables)
        partitions.set(table, await numberedPartitions(client, database.schemaName, table, 'g'))
      /** Creates the missing partitions of generations `from` to `from + AHEAD`; false when a step gave up. */
      const ensure = async (from: number): Promise<boolean> => {
        for (let next = from; next <= from + AHEAD; next += 1) {
          for (const table of tables) {
            const existing = partitions.get(table)!
            if (existing.has(next)) continue
            const name = `${table}_g${next}`
            const ok = await step(async () => {
              await client.query(
                `CREATE TABLE ${qualified(name)} (LIKE ${qualified(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
              )
              await client.query(
                `ALTER TABLE ${qualified(table)} ATTACH PARTITION ${qualified(name)} FOR VALUES IN (${next})`,
              )
            })
            if (!ok) return false
            existing.set(next, name)
            created.push(name)
          }
        }
        return true
      }

      const state = await client.query<{ generation: string; recorded: string; started_at: number | null }>(
        `SELECT (SELECT last_value FROM ${qualified(family.sequence)}) AS generation, generation AS recorded,
              started_at FROM ${schema}.generation_clock WHERE family = $1`,
        [family.family],
      )
      generation = Number(state.rows[0]!.generation)
      const startedAt = state.rows[0]!.started_at
      const ready = await ensure(generation)
      if (Number(state.rows[0]!.recorded) !== generation) {
        // A rotation whose sequence moved but whose transaction did not commit (a sequence does not roll back):
        // the generation in use is the sequence's; record it, under the key, for the snapshot checks.
        await step(async () => {
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
            generationLockKey(database, family),
          ])
          await client.query(
            `UPDATE ${schema}.generation_clock SET generation = (SELECT last_value FROM ${qualified(family.sequence)})
            WHERE family = $1`,
            [family.family],
          )
        })
      } else if (startedAt === null) {
        // The first maintenance after the migration: the current generation counts from now.
        await client.query(`UPDATE ${schema}.generation_clock SET started_at = $2 WHERE family = $1`, [
          family.family,
          now,
        ])
      } else if (ready && now >= startedAt + family.seconds) {
        const began = performance.now()
        const ok = await step(async () => {
          // Waits for every decision holding the key shared (they used this generation) and holds the next
          // ones back until the commit; at most the lock timeout, else the rotation waits for the next sweep.
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
            generationLockKey(database, family),
          ])
          const current = await client.query<{ generation: string }>(
            `SELECT last_value AS generation FROM ${qualified(family.sequence)}`,
          )
          if (Number(current.rows[0]!.generation) !== generation) return
          await client.query(
            `UPDATE ${schema}.generation_clock SET started_at = $2, generation = $3 WHERE family = $1`,
            [family.family, now, generation + 1],
          )
          // Last: a sequence does not roll back, so nothing may fail after it (should the commit fail all the
          // same, the next run records the sequence's value). `setval`, not `nextval`: it logs the exact value,
          // where `nextval` logs values ahead that a crash would skip to.
          await client.query(`SELECT setval('${qualified(family.sequence)}', $1, true)`, [generation + 1])
          generation += 1
          rotated = true
        })
        rotateMs = performance.now() - began
        if (ok && rotated) await ensure(generation)
      }

      // Generations older than the current one whose rows have all expired, rows and counters together.
      const records = partitions.get(family.records)!
      for (const [old, name] of [...records].sort((a, b) => a[0] - b[0])) {
        if (old >= generation) break
        const partition = qualified(name)
        const keeps = async () =>
          (
            await client.query<{ keep: boolean | null }>(
              `SELECT max(expires_at) > $1 AS keep FROM ${partition}`,
              [now],
            )
          ).rows[0]?.keep === true
        if (await keeps()) continue
        const counters = family.counters ? partitions.get(family.counters.table)!.get(old) : undefined
        let estimate = 0
        let kept = false
        const began = performance.now()
        const detached = await step(async () => {
          // The parents in the writers' order (rows, then counters): no lock-order inversion.
          await client.query(`LOCK TABLE ${qualified(family.records)} IN ACCESS EXCLUSIVE MODE`)
          if (family.counters)
            await client.query(`LOCK TABLE ${qualified(family.counters.table)} IN ACCESS EXCLUSIVE MODE`)
          if (await keeps()) {
            kept = true
            return
          }
          if (family.counters && counters) {
            const sum = await client.query<{ n: string | null }>(
              `SELECT sum(${quoteIdentifier(family.counters.count)})::bigint AS n FROM ${qualified(counters)}`,
            )
            estimate = Math.max(0, Number(sum.rows[0]?.n ?? 0))
          } else {
            const tuples = await client.query<{ reltuples: number }>(
              'SELECT reltuples::float8 AS reltuples FROM pg_class WHERE oid = $1::regclass',
              [partition],
            )
            estimate = Math.max(0, Math.round(tuples.rows[0]?.reltuples ?? 0))
          }
          await client.query(`ALTER TABLE ${qualified(family.records)} DETACH PARTITION ${partition}`)
          if (family.counters && counters)
            await client.query(
              `ALTER TABLE ${qualified(family.counters.table)} DETACH PARTITION ${qualified(counters)}`,
            )
        })
        if (!detached) break
        if (kept) continue
        detachMs += performance.now() - began
        rows += estimate
        // No longer part of the tables: dropping them waits for no writer.
        const ok = await step(async () => {
          await client.query(`DROP TABLE ${partition}`)
          if (counters) await client.query(`DROP TABLE ${qualified(counters)}`)
        })
        dropMs += performance.now() - began
        if (!ok) break
        dropped.push(name, ...(counters ? [counters] : []))
      }
    },
  )
  deferred ||= deferredRun
  return done()
}
