/** Multi-row inserts, chunked so a statement stays well under both databases' parameter limits. */
import { placeholders, type SqlExecutor, type SqlValue } from '@adwire/sql'

const MAX_PARAMETERS = 900

/**
 * Inserts `rows` into `table` with as few statements as the parameter limit allows.
 *
 * @example
 * await insertMany(tx, 'registry_property_identifiers', ['identifier_type', 'identifier_value'], [['domain', 'a.example']])
 */
export async function insertMany(
  tx: SqlExecutor,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly SqlValue[])[],
): Promise<void> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length))
  const tuple = `(${placeholders(columns.length)})`
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement)
    await tx.run(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
      chunk.flat(),
    )
  }
}
