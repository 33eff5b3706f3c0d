/**
 * The counter stripes of a counted family (claims per scope, nonces per keyid; migrations 4 and 6): the
 * stripes of backends that are gone are folded into stripe 0 of their key and generation (no backend has
 * process id 0) and stripes at zero are dropped, both `SKIP LOCKED` (a stripe someone holds is left for the
 * next sweep), so a sweep never waits on the hot path. Expired rows are no longer deleted here: they go with
 * their generation's partition (`generations.ts`).
 */
import type { Database } from './database.js'

export interface CountedTable {
  /** The counter stripes: the key columns, `generation`, `stripe` (a backend's process id, 0 for folded ones) and the count. */
  readonly counters: string
  readonly keys: readonly string[]
  /** The counter column. */
  readonly count: string
}

/** Folds the stripes of gone backends into stripe 0 and drops stripes at zero. */
export async function foldStripes(database: Database, table: CountedTable): Promise<void> {
  const keys = [...table.keys, 'generation']
  const columns = keys.join(', ')
  const qualified = (alias: string) => keys.map((key) => `${alias}.${key}`).join(', ')
  const matches = (left: string, right: string) =>
    keys.map((key) => `${left}.${key} = ${right}.${key}`).join(' AND ')
  const counters = `${database.schema}.${table.counters}`
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
}
