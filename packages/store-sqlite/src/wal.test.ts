import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { enableWal } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-wal-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

/**
 * Another process takes an exclusive lock on the file and holds it for `holdMs`; resolves once the lock is
 * held, with `released`: a promise of that process's end (wrapped, so that awaiting the call does not wait for it).
 */
async function holdExclusiveLock(path: string, holdMs: number) {
  const code = `const Database = require(process.argv[1])
    const db = new Database(process.argv[2])
    db.exec('BEGIN EXCLUSIVE')
    db.exec('CREATE TABLE IF NOT EXISTS t (x)')
    process.stdout.write('locked\\n')
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[3]))
    db.exec('COMMIT')
    db.close()`
  const child = spawn(
    process.execPath,
    ['-e', code, createRequire(import.meta.url).resolve('better-sqlite3'), path, String(holdMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const ended = new Promise<void>((resolve, reject) =>
    child.once('exit', (status) =>
      status === 0 ? resolve() : reject(new Error(`lock holder exited ${status}`)),
    ),
  )
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('exit', (status) => reject(new Error(`lock holder exited ${status} before locking`)))
  })
  return { released: ended }
}

describe('enableWal', () => {
  it('waits out a lock that makes SQLite answer SQLITE_BUSY at once, within busyTimeoutMs', async () => {
    const path = join(directory, 'waits.sqlite')
    const { released } = await holdExclusiveLock(path, 150)
    const database = new Database(path, { timeout: 0 })
    try {
      expect(enableWal(database, { busyTimeoutMs: 5_000 })).toBe('wal')
    } finally {
      database.close()
    }
    await released
  })

  it('gives up with SQLITE_BUSY once busyTimeoutMs has passed', async () => {
    const path = join(directory, 'gives-up.sqlite')
    const { released } = await holdExclusiveLock(path, 500)
    const database = new Database(path, { timeout: 0 })
    try {
      expect(() => enableWal(database, { busyTimeoutMs: 50 })).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^SQLITE_BUSY/) }),
      )
    } finally {
      database.close()
    }
    await released
  })

  it('reports memory for an in-memory database', () => {
    const database = new Database(':memory:')
    expect(enableWal(database, { busyTimeoutMs: 0 })).toBe('memory')
    database.close()
  })
})
