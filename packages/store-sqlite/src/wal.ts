import type Database from 'better-sqlite3'

const SLEEPER = new Int32Array(new SharedArrayBuffer(4))

/** Whether `error` is SQLite's "database is locked" (SQLITE_BUSY or one of its extended codes). */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

/**
 * Switches a connection to WAL journaling and returns the journal mode SQLite reports (`'wal'` on a file,
 * `'memory'` for `:memory:`). Changing the journal mode needs an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once, without its busy handler, when another process holds a lock on a brand-new file
 * (several processes opening one fresh file together); so this retries, with short pauses, for up to
 * `busyTimeoutMs` before giving up with that error.
 *
 * @example
 * const database = new Database('./data/app.sqlite', { timeout: 5000 })
 * enableWal(database, { busyTimeoutMs: 5000 }) // 'wal'
 */
export function enableWal(database: Database.Database, options: { readonly busyTimeoutMs: number }): unknown {
  const deadline = Date.now() + options.busyTimeoutMs
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return database.pragma('journal_mode = WAL', { simple: true })
    } catch (error) {
      if (!isBusy(error) || Date.now() + pause > deadline) throw error
      Atomics.wait(SLEEPER, 0, 0, pause)
    }
  }
}
