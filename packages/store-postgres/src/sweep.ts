/**
 * The sweep of a counted table (claims per scope, nonces per keyid): deletes expired rows and keeps the sum of
 * each key's counter stripes equal to the rows it holds (migration 4). It locks no counter another backend
 * writes: what a batch deletes is subtracted from this backend's own stripe, as the writers add to theirs.
 * Then the stripes of backends that are gone are folded into stripe 0 and stripes at zero are dropped, both
 * `SKIP LOCKED` (a stripe someone holds is left for the next sweep), so a sweep never waits on the hot path.
 * Each batch is one short transaction.
 */
import type { Database } from './database.js'

export interface CountedTable {
  /** The rows, each with `expires_at` and the key columns. */
  readonly records: string
  /** The counter stripes: the key columns, `stripe` (a backend's process id, 0 for folded ones) and the count. */
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
  const counters = `${schema}.${table.counters}`
  // The keys holding expired rows, in key order from the cursor on (no lock). The expired keys are read once,
  // from the expiry index, before the join: left to the planner as a semi-join, stale statistics on a busy
  // table once gave a plan that scanned the rows again for every counter stripe (minutes on a million claims).
  const keysDue = `
    WITH expired AS MATERIALIZED (
      SELECT DISTINCT ${qualified('r')} FROM ${schema}.${table.records} r WHERE r.expires_at <= $1
    )
    SELECT ${qualified('e')} FROM expired e
     WHERE ($2::text IS NULL OR (${qualified('e')}) > (${cursor}))
       AND EXISTS (SELECT 1 FROM ${counters} t WHERE ${matches('t', 'e')})
     ORDER BY ${columns} LIMIT ${BATCH}`
  const arrays = table.keys.map((_, index) => `$${index + 2}::text[]`).join(', ')
  const remove = `
    WITH due AS (SELECT * FROM unnest(${arrays}) AS l(${columns})),
    deleted AS (
      DELETE FROM ${schema}.${table.records} r USING due l WHERE ${matches('r', 'l')} AND r.expires_at <= $1
      RETURNING ${qualified('r')}
    ),
    counts AS (SELECT ${columns}, count(*) AS n FROM deleted GROUP BY ${columns}),
    subtracted AS (
      INSERT INTO ${counters} AS t (${columns}, stripe, ${table.count})
        SELECT ${columns}, pg_backend_pid(), -n FROM counts
        ON CONFLICT (${columns}, stripe) DO UPDATE SET ${table.count} = t.${table.count} + excluded.${table.count}
      RETURNING 1
    )
    SELECT coalesce((SELECT sum(n) FROM counts), 0)::float8 AS removed, (SELECT count(*) FROM subtracted) AS keys`

  let removed = 0
  let after: readonly (string | null)[] = table.keys.map(() => null)
  for (;;) {
    const batch = await database.transaction('sweep', async (client) => {
      const due = await client.query<Record<string, string>>(keysDue, [now, ...after])
      if (due.rows.length === 0) return { count: 0, last: undefined, size: 0 }
      const keyArrays = table.keys.map((key) => due.rows.map((row) => row[key]))
      const result = await client.query<{ removed: number }>(remove, [now, ...keyArrays])
      const lastRow = due.rows[due.rows.length - 1]!
      return {
        count: result.rows[0]?.removed ?? 0,
        last: table.keys.map((key) => lastRow[key] ?? null),
        size: due.rows.length,
      }
    })
    removed += batch.count
    if (!batch.last || batch.size < BATCH) break
    after = batch.last
  }
  // The stripes of backends that are gone, folded into stripe 0 of their key (no backend has process id 0).
  await database.execute(
    'sweep',
    `WITH gone AS (
       SELECT ${qualified('t')}, t.stripe FROM ${counters} t
        WHERE t.stripe <> 0 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.stripe)
        FOR UPDATE SKIP LOCKED
     ),
     taken AS (
       DELETE FROM ${counters} t USING gone g WHERE ${matches('t', 'g')} AND t.stripe = g.stripe
       RETURNING ${qualified('t')}, t.${table.count} AS n
     ),
     sums AS (SELECT ${columns}, sum(n)::bigint AS n FROM taken GROUP BY ${columns})
     INSERT INTO ${counters} AS t (${columns}, stripe, ${table.count})
       SELECT ${columns}, 0, n FROM sums
       ON CONFLICT (${columns}, stripe) DO UPDATE SET ${table.count} = t.${table.count} + excluded.${table.count}`,
    [],
  )
  // Stripes at zero hold nothing; a writer that finds its stripe gone creates it again.
  await database.execute(
    'sweep',
    `DELETE FROM ${counters} t
      USING (SELECT ${columns}, stripe FROM ${counters} WHERE ${table.count} = 0 FOR UPDATE SKIP LOCKED) empty
      WHERE ${matches('t', 'empty')} AND t.stripe = empty.stripe`,
    [],
  )
  return removed
}
