/**
 * The sweep of a counted table (claims per scope, nonces per keyid): deletes expired rows and keeps each
 * counter equal to the rows it counts. Batches of counters are locked in key order before their rows are
 * deleted, the same order `claim` and `remember_nonce` take (counter, then rows), so sweeps never deadlock
 * with them or with each other. Each batch is one short transaction.
 */
import type { Database } from './database.js'

export interface CountedTable {
  /** The rows, each with `expires_at` and the key columns. */
  readonly records: string
  /** One row per key with the number of rows it holds. */
  readonly counters: string
  readonly keys: readonly string[]
  /** The counter column. */
  readonly count: string
}

const BATCH = 200

/** Deletes the rows of `table` expired at `now`; resolves with how many. */
export async function sweepCounted(database: Database, now: number, table: CountedTable): Promise<number> {
  const schema = database.schema
  const columns = table.keys.join(', ')
  const qualified = (alias: string) => table.keys.map((key) => `${alias}.${key}`).join(', ')
  const cursor = table.keys.map((_, index) => `$${index + 2}::text`).join(', ')
  const matches = (left: string, right: string) =>
    table.keys.map((key) => `${left}.${key} = ${right}.${key}`).join(' AND ')
  const lock = `
    SELECT ${qualified('t')} FROM ${schema}.${table.counters} t
     WHERE ($2::text IS NULL OR (${qualified('t')}) > (${cursor}))
       AND (${qualified('t')}) IN (SELECT ${qualified('r')} FROM ${schema}.${table.records} r WHERE r.expires_at <= $1)
     ORDER BY ${columns} LIMIT ${BATCH} FOR UPDATE OF t`
  const arrays = table.keys.map((_, index) => `$${index + 2}::text[]`).join(', ')
  const remove = `
    WITH locked AS (SELECT * FROM unnest(${arrays}) AS l(${columns})),
    deleted AS (
      DELETE FROM ${schema}.${table.records} r USING locked l WHERE ${matches('r', 'l')} AND r.expires_at <= $1
      RETURNING ${qualified('r')}
    ),
    counts AS (SELECT ${columns}, count(*) AS n FROM deleted GROUP BY ${columns}),
    updated AS (
      UPDATE ${schema}.${table.counters} t SET ${table.count} = t.${table.count} - counts.n
        FROM counts WHERE ${matches('t', 'counts')}
      RETURNING counts.n
    )
    SELECT coalesce(sum(n), 0)::float8 AS removed FROM updated`

  let removed = 0
  let after: readonly (string | null)[] = table.keys.map(() => null)
  for (;;) {
    const batch = await database.transaction('sweep', async (client) => {
      const locked = await client.query<Record<string, string>>(lock, [now, ...after])
      if (locked.rows.length === 0) return { count: 0, last: undefined, size: 0 }
      const keyArrays = table.keys.map((key) => locked.rows.map((row) => row[key]))
      const result = await client.query<{ removed: number }>(remove, [now, ...keyArrays])
      const lastRow = locked.rows[locked.rows.length - 1]!
      return {
        count: result.rows[0]?.removed ?? 0,
        last: table.keys.map((key) => lastRow[key] ?? null),
        size: locked.rows.length,
      }
    })
    removed += batch.count
    if (!batch.last || batch.size < BATCH) break
    after = batch.last
  }
  // Counters of keys that hold nothing any more. SKIP LOCKED: a counter someone holds is left for the next
  // sweep, so this never waits while holding another counter (no deadlock with a concurrent sweep). A writer
  // that finds its counter gone creates it again.
  await database.execute(
    'sweep',
    `DELETE FROM ${schema}.${table.counters} t
      USING (SELECT ${columns} FROM ${schema}.${table.counters} WHERE ${table.count} = 0 FOR UPDATE SKIP LOCKED) empty
      WHERE ${matches('t', 'empty')}`,
    [],
  )
  return removed
}
