/**
 * A tiny async SQL surface over better-sqlite3 and pg, so the auth logic is written once. Statements use `?`
 * placeholders (rewritten to `$1…` for PostgreSQL) and `{name}` for auth table names.
 */
import type BetterSqlite3 from 'better-sqlite3'
import { assertSchemaVersion, migratePostgres, migrateSqlite } from '@adwire/service-kit'
import type pg from 'pg'
import { AUTH_SCHEMA_VERSION, authTables } from './schema.js'

/** Where the auth tables live: one SQLite database, or one schema of a PostgreSQL database. */
export type AuthStoreConfig =
  { kind: 'sqlite'; db: BetterSqlite3.Database } | { kind: 'postgres'; pool: pg.Pool; schema: string }

type Param = string | number | null

/** The statements the auth module runs. */
export interface AuthDb {
  /** First row of a query, or `undefined`. */
  one<Row>(sql: string, params?: Param[]): Promise<Row | undefined>
  /** Every row of a query. */
  all<Row>(sql: string, params?: Param[]): Promise<Row[]>
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: Param[]): Promise<number>
}

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

/** Replaces `{name}` with the table name `registry_auth_name` (schema-qualified when `schema` is set). */
function tables(sql: string, schema?: string): string {
  return sql.replace(/\{([a-z_]+)\}/g, (_, name: string) =>
    schema ? `${quote(schema)}.registry_auth_${name}` : `registry_auth_${name}`,
  )
}

/** Opens the auth statements on the configured store. */
export function authDb(store: AuthStoreConfig): AuthDb {
  if (store.kind === 'sqlite') {
    const { db } = store
    const prepared = new Map<string, BetterSqlite3.Statement>()
    const statement = (sql: string): BetterSqlite3.Statement => {
      let found = prepared.get(sql)
      if (!found) {
        found = db.prepare(tables(sql))
        prepared.set(sql, found)
      }
      return found
    }
    return {
      one: async <Row>(sql: string, params: Param[] = []) => statement(sql).get(...params) as Row | undefined,
      all: async <Row>(sql: string, params: Param[] = []) => statement(sql).all(...params) as Row[],
      run: async (sql, params = []) => statement(sql).run(...params).changes,
    }
  }
  const { pool, schema } = store
  const toPg = (sql: string): string => {
    let index = 0
    return tables(sql, schema).replace(/\?/g, () => `$${++index}`)
  }
  return {
    one: async <Row>(sql: string, params: Param[] = []) =>
      (await pool.query(toPg(sql), params)).rows[0] as Row | undefined,
    all: async <Row>(sql: string, params: Param[] = []) =>
      (await pool.query(toPg(sql), params)).rows as Row[],
    run: async (sql, params = []) => (await pool.query(toPg(sql), params)).rowCount ?? 0,
  }
}

/**
 * Creates (or upgrades) the `registry_auth_*` tables in a SQLite database. Idempotent.
 * @example
 * const db = new Database('./data/registry.sqlite')
 * migrateAuthSqlite(db)
 */
export function migrateAuthSqlite(db: BetterSqlite3.Database): void {
  db.pragma('foreign_keys = ON')
  migrateSqlite(db, () => {
    for (const statement of authTables((name) => `registry_auth_${name}`, 'INTEGER')) db.exec(statement)
    checkVersion(
      db.prepare(`SELECT value FROM registry_auth_meta WHERE name = 'schema_version'`).get() as
        { value: string } | undefined,
    )
    db.prepare(
      `INSERT INTO registry_auth_meta (name, value) VALUES ('schema_version', ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    ).run(String(AUTH_SCHEMA_VERSION))
  })
}

/**
 * Creates (or upgrades) the `registry_auth_*` tables in `schema` of a PostgreSQL database, creating the
 * schema when missing. Concurrent callers are serialised with an advisory lock. Idempotent.
 * @example
 * await migrateAuthPostgres(new pg.Pool({ connectionString }), 'public')
 */
export async function migrateAuthPostgres(pool: pg.Pool, schema: string): Promise<void> {
  const s = quote(schema)
  await migratePostgres(pool, `adwire_registry_auth:${schema}`, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    for (const statement of authTables((name) => `${s}.registry_auth_${name}`, 'BIGINT')) {
      await client.query(statement)
    }
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM ${s}.registry_auth_meta WHERE name = 'schema_version'`,
    )
    checkVersion(rows[0])
    await client.query(
      `INSERT INTO ${s}.registry_auth_meta (name, value) VALUES ('schema_version', $1)
       ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
      [String(AUTH_SCHEMA_VERSION)],
    )
  })
}

function checkVersion(row: { value: string } | undefined): void {
  assertSchemaVersion('registry_auth', row?.value, AUTH_SCHEMA_VERSION)
}
