/**
 * What a run left in a PostgreSQL schema, per delivery: rows, table bytes (heap and TOAST) and index bytes of
 * each table, read from the catalog (`pg_relation_size`, `pg_indexes_size`, exact row counts). The benches
 * print it as `storage:` lines; docs/capacity.md builds its capacity model on them. A partitioned table is
 * listed by its partitions (its own row holds no bytes and would count their rows twice).
 */
import pg from 'pg'

export interface TableStorage {
  readonly table: string
  readonly rows: number
  /** Heap and TOAST bytes. */
  readonly tableBytes: number
  readonly indexBytes: number
  readonly indexes: readonly { readonly name: string; readonly bytes: number }[]
  /** Dead tuples the statistics know of (updated or deleted rows not yet vacuumed). */
  readonly deadRows: number
}

export interface Storage {
  readonly deliveries: number
  readonly tables: readonly TableStorage[]
}

export async function storageOf(url: string, schema: string, deliveries: number): Promise<Storage> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    // The statistics are written with a delay; give them a moment (only the dead-row count uses them).
    await new Promise((resolve) => setTimeout(resolve, 700))
    await client.query('SELECT pg_stat_clear_snapshot()')
    const { rows: tables } = await client.query<{
      table: string
      table_bytes: string
      index_bytes: string
      dead: string | null
    }>(
      `SELECT c.relname AS table,
              pg_relation_size(c.oid) + coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS table_bytes,
              pg_indexes_size(c.oid) AS index_bytes,
              s.n_dead_tup AS dead
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
      [schema],
    )
    const out: TableStorage[] = []
    for (const table of tables) {
      const { rows: counted } = await client.query<{ rows: string }>(
        `SELECT count(*) AS rows FROM "${schema}"."${table.table}"`,
      )
      const { rows: indexes } = await client.query<{ name: string; bytes: string }>(
        `SELECT i.relname AS name, pg_relation_size(i.oid) AS bytes
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
          WHERE n.nspname = $1 AND t.relname = $2 ORDER BY i.relname`,
        [schema, table.table],
      )
      out.push({
        table: table.table,
        rows: Number(counted[0]!.rows),
        tableBytes: Number(table.table_bytes),
        indexBytes: Number(table.index_bytes),
        indexes: indexes.map((index) => ({ name: index.name, bytes: Number(index.bytes) })),
        deadRows: Number(table.dead ?? 0),
      })
    }
    return { deliveries, tables: out }
  } finally {
    await client.end()
  }
}

/** Prints `storage:` lines: per table, then the total, per delivery (tables without rows left out). */
export function printStorage(name: string, storage: Storage): void {
  const per = (value: number) => value / storage.deliveries
  console.log(`\nstorage (${name}, ${storage.deliveries} deliveries; bytes per delivery, 8 KB pages):`)
  const tables = storage.tables.filter((table) => table.rows > 0 || table.deadRows > 0)
  const width = Math.max(...tables.map((table) => table.table.length), 5)
  console.log(
    `storage: ${'table'.padEnd(width)}  rows/delivery  table B/delivery  index B/delivery  dead rows  indexes (B/delivery)`,
  )
  for (const table of tables)
    console.log(
      `storage: ${table.table.padEnd(width)}  ${per(table.rows).toFixed(2).padStart(13)}  ${per(
        table.tableBytes,
      )
        .toFixed(0)
        .padStart(
          16,
        )}  ${per(table.indexBytes).toFixed(0).padStart(16)}  ${String(table.deadRows).padStart(9)}  ${table.indexes
        .map((index) => `${index.name} ${per(index.bytes).toFixed(0)}`)
        .join(', ')}`,
    )
  const sum = (pick: (table: TableStorage) => number) =>
    tables.reduce((total, table) => total + pick(table), 0)
  console.log(
    `storage: ${'total'.padEnd(width)}  ${per(sum((table) => table.rows))
      .toFixed(2)
      .padStart(13)}  ${per(sum((table) => table.tableBytes))
      .toFixed(0)
      .padStart(16)}  ${per(sum((table) => table.indexBytes))
      .toFixed(0)
      .padStart(16)}  ${String(sum((table) => table.deadRows)).padStart(9)}`,
  )
}
