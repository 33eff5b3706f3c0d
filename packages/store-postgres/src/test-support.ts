/**
 * Shared by the tests of this package (not exported by it): a schema brought to an older version, as a
 * release of that version left it, for the upgrade tests.
 */
import { queryOnce } from '@adwire/vitest-config/postgres'
import { MIGRATIONS } from './migrations.js'

/**
 * Creates `schema` (a plain name) and applies migrations 1 to `version` to it, recorded as the migrator
 * records them; resolves with the quoted schema name.
 */
export async function schemaAtVersion(url: string, schema: string, version: number): Promise<string> {
  const quoted = `"${schema}"`
  await queryOnce(url, `CREATE SCHEMA ${quoted}`)
  await queryOnce(
    url,
    `CREATE TABLE ${quoted}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  )
  for (const migration of MIGRATIONS.filter((candidate) => candidate.version <= version)) {
    await queryOnce(url, migration.sql(quoted))
    await queryOnce(url, `INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ])
  }
  return quoted
}
