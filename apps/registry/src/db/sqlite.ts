/**
 * The registry on one SQLite file (better-sqlite3, WAL, synchronous=FULL: durable by default), migrated, behind
 * the shared driver of @adwire/sql.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { enableWal } from '@adwire/store-sqlite'
import { migrateSqlite as inTransaction } from '@adwire/service-kit'
import { sqliteDriver, type SqlDriver } from '@adwire/sql'
import Database from 'better-sqlite3'
import { assertKnownVersion, MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js'

/**
 * Opens (creating the folder and file if needed) and migrates a SQLite database.
 *
 * @example
 * const { driver, db } = openSqlite('./data/registry.sqlite')
 * await driver.all('SELECT domain FROM registry_brands')
 * await driver.close()
 */
export function openSqlite(path: string): { driver: SqlDriver; db: Database.Database } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: 5000 })
  try {
    // Another process (the admin command) may hold a lock on a fresh file: wait it out like any lock.
    enableWal(db, { busyTimeoutMs: 5000 })
    db.pragma('synchronous = FULL')
    migrateSqlite(db)
  } catch (error) {
    db.close()
    throw error
  }
  return { driver: sqliteDriver(db), db }
}

/** Applies the pending migrations in one transaction: all of them, or none. */
export function migrateSqlite(db: Database.Database): void {
  inTransaction(db, () => {
    db.exec(MIGRATIONS_TABLE)
    const applied = (
      db.prepare('SELECT version FROM registry_migrations').all() as { version: number }[]
    ).map((row) => row.version)
    assertKnownVersion(applied)
    for (const migration of MIGRATIONS) {
      if (applied.includes(migration.version)) continue
      for (const statement of [...migration.statements, ...(migration.dialects?.sqlite ?? [])])
        db.exec(statement)
      db.prepare('INSERT INTO registry_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      )
    }
  })
}
