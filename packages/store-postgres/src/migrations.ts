/**
 * Numbered migrations, applied on open. Each runs in its own transaction and is recorded in
 * `<schema>.schema_migrations`; concurrent openers (many processes starting at once) serialise on a session
 * advisory lock keyed by the schema name, and whoever comes second finds the work done. A schema already
 * migrated by a newer release is refused rather than used with statements that may no longer fit it.
 */
import type { PoolClient } from 'pg'
import type { Database } from './database.js'
import { StoreError, toStoreError } from './errors.js'
import { initialSchema } from './schema-v1.js'
import { mediaBuysSchema } from './schema-v2.js'
import { inboxSchema } from './schema-v3.js'
import { stripedCountersSchema } from './schema-v4.js'
import { partitionsSchema } from './schema-v5.js'
import { generationsSchema } from './schema-v6.js'

/** One schema change; `sql` receives the quoted schema name. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: (schema: string) => string
}

/** Every migration this release knows, in order. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: initialSchema },
  {
    version: 2,
    name: 'outbox media buys: final-report barriers and closed media buys',
    sql: mediaBuysSchema,
  },
  {
    version: 3,
    name: 'inbox: one round trip for the decisions of a delivery and of a group',
    sql: inboxSchema,
  },
  {
    version: 4,
    name: 'no serial section per sender: nonces and claims decided by their own keys, counters striped per backend',
    sql: stripedCountersSchema,
  },
  {
    version: 5,
    name: 'time partitions: the outbox by deadline and webhook_activity by time, expired by dropping partitions',
    sql: partitionsSchema,
  },
  {
    version: 6,
    name: 'generations: claims, terminals and nonces partitioned by generation, expired by dropping partitions',
    sql: generationsSchema,
  },
]

/** The schema version this release writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/**
 * Brings the schema up to {@link SCHEMA_VERSION}; resolves with the version found before. Throws
 * `store_schema_newer` when the schema is ahead of this release.
 */
export async function migrate(database: Database): Promise<number> {
  const client = await database.connect('migrate')
  let broken: Error | undefined
  try {
    // Fast path, no lock: already current (the usual case when a fleet restarts).
    const found = await currentVersion(client, database)
    if (found === SCHEMA_VERSION) return found
    assertNotNewer(found, database.schemaName)
    const lockKey = `@adwire/store-postgres:${database.schemaName}`
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey])
    try {
      return await migrateLocked(client, database)
    } finally {
      await client
        .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey])
        .catch((error: unknown) => {
          // The session is unusable; destroying it frees the lock on the server.
          broken = error instanceof Error ? error : new Error(String(error))
        })
    }
  } catch (error) {
    throw toStoreError(error, 'migrate')
  } finally {
    client.release(broken)
  }
}

async function migrateLocked(client: PoolClient, database: Database): Promise<number> {
  const schema = database.schema
  const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [database.schemaName])
  if (exists.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
       version integer PRIMARY KEY,
       name text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  )
  const before = await currentVersion(client, database)
  assertNotNewer(before, database.schemaName)
  for (const migration of MIGRATIONS) {
    if (migration.version <= before) continue
    await client.query('BEGIN')
    try {
      await client.query(migration.sql(schema))
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw toStoreError(error, `migration ${migration.version} (${migration.name})`)
    }
  }
  return before
}

/** The highest applied version, 0 when the schema or its migrations table does not exist yet. */
async function currentVersion(client: PoolClient, database: Database): Promise<number> {
  const table = await client.query<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [
    `${database.schema}.schema_migrations`,
  ])
  if (!table.rows[0]?.name) return 0
  const result = await client.query<{ version: number }>(
    `SELECT coalesce(max(version), 0)::integer AS version FROM ${database.schema}.schema_migrations`,
  )
  return result.rows[0]?.version ?? 0
}

function assertNotNewer(version: number, schemaName: string): void {
  if (version > SCHEMA_VERSION) {
    throw new StoreError(
      'store_schema_newer',
      `schema "${schemaName}" is at version ${version}, newer than this @adwire/store-postgres knows (${SCHEMA_VERSION}); upgrade the package`,
    )
  }
}
