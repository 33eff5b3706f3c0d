/** Test helper: a fresh SQLite file and a fresh PostgreSQL schema for the driver and queue tests. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { dropSchema, freshSchemaName, queryOnce } from '@adwire/vitest-config/postgres'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { SqlDriver } from './driver.js'
import { postgresDriver } from './postgres.js'
import { sqliteDriver } from './sqlite.js'

/** A new SQLite file (WAL, busy timeout) in a temporary folder; `open` opens one more connection to it. */
export function sqliteFile(): { open: () => SqlDriver } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-sql-')), 'test.sqlite')
  return {
    open() {
      const db = new Database(file, { timeout: 5000 })
      db.pragma('journal_mode = WAL')
      return sqliteDriver(db)
    },
  }
}

/** A new PostgreSQL schema; `open` opens one more pool whose connections use it. */
export async function postgresSchema(
  url: string,
): Promise<{ open: (max?: number) => SqlDriver; drop: () => Promise<void> }> {
  const schema = freshSchemaName('adwire_sql')
  await queryOnce(url, `CREATE SCHEMA "${schema}"`)
  return {
    open: (max = 4) =>
      postgresDriver(new pg.Pool({ connectionString: url, options: `-c search_path="${schema}"`, max })),
    drop: () => dropSchema(url, schema),
  }
}
