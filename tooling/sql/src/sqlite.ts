/**
 * The {@link SqlDriver} on a better-sqlite3 database. Statements are prepared once and cached. better-sqlite3 is
 * synchronous, so a transaction whose work awaits is serialised with the other writers by a queue; reads run at
 * once. Opening the file (WAL, synchronous, migrations) is the caller's.
 */
import type Database from 'better-sqlite3'
import type { SqlDriver, SqlExecutor, SqlValue } from './driver.js'

/**
 * @example
 * const driver = sqliteDriver(new Database('./data/app.sqlite'))
 * await driver.all('SELECT name FROM settings')
 * await driver.close() // closes the database
 */
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
