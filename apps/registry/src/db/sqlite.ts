/**
 * The registry on one SQLite file (better-sqlite3, WAL, synchronous=FULL: durable by default). Statements are
 * prepared once and cached. better-sqlite3 is synchronous, so a transaction whose work awaits is serialised
 * with the other writers by a queue; reads run at once.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { enableWal } from '@adwire/store-sqlite'
import { migrateSqlite as inTransaction } from '@adwire/service-kit'
import Database from 'better-sqlite3'
import type { SqlDriver, SqlExecutor, SqlValue } from './driver.js'
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

/** The {@link SqlDriver} over an open, migrated better-sqlite3 database. */
export function sqliteDriver(db: Database.Database): SqlDriver {
  const cache = new Map<string, Database.Statement>()
  const statement = (sql: string): Database.Statement => {
    let found = cache.get(sql)
    if (!found) {
      found = db.prepare(sql)
      cache.set(sql, found)
    }
    return found
  }
  const rawCache = new Map<string, Database.Statement>()
  const rawStatement = (sql: string): Database.Statement => {
    let found = rawCache.get(sql)
    if (!found) {
      found = db.prepare(sql).raw(true)
      rawCache.set(sql, found)
    }
    return found
  }
  const executor: SqlExecutor = {
    dialect: 'sqlite',
    all: async <Row>(sql: string, params: readonly SqlValue[] = []) => statement(sql).all(...params) as Row[],
    tuples: async <Tuple extends readonly unknown[]>(sql: string, params: readonly SqlValue[] = []) =>
      rawStatement(sql).all(...params) as Tuple[],
    one: async <Row>(sql: string, params: readonly SqlValue[] = []) =>
      statement(sql).get(...params) as Row | undefined,
    run: async (sql, params = []) => statement(sql).run(...params).changes,
  }
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work)
    queue = next.catch(() => undefined)
    return next
  }
  let closed = false
  return {
    dialect: 'sqlite',
    all: executor.all,
    tuples: executor.tuples,
    one: executor.one,
    run: (sql, params) => exclusive(() => executor.run(sql, params)),
    transaction: (work) =>
      exclusive(async () => {
        db.prepare('BEGIN IMMEDIATE').run()
        try {
          const result = await work(executor)
          db.prepare('COMMIT').run()
          return result
        } catch (error) {
          if (db.inTransaction) db.prepare('ROLLBACK').run()
          throw error
        }
      }),
    async close() {
      if (closed) return
      closed = true
      await queue
      db.close()
    },
  }
}
