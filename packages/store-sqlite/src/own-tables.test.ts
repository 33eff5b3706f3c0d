/** A caller's own migration on a SQLite file commits every statement together, or none of them. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { migrateSqlite, openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-own-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const tables = (db: Database.Database, like: string) =>
  db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ORDER BY name`).all(like)

describe('migrateSqlite', () => {
  it('commits every statement together, or none of them', () => {
    const db = new Database(join(directory, 'plain.sqlite'))
    try {
      expect(() =>
        migrateSqlite(db, () => {
          db.exec('CREATE TABLE first (id INTEGER)')
          db.exec('CREATE TABLE second (id INTEGER')
        }),
      ).toThrow()
      expect(tables(db, '%')).toEqual([])
      expect(migrateSqlite(db, () => db.exec('CREATE TABLE first (id INTEGER)') && 'done')).toBe('done')
      expect(tables(db, '%')).toEqual([{ name: 'first' }])
    } finally {
      db.close()
    }
  })

  it("migrates a caller's tables beside the stores, on their connection", async () => {
    const path = join(directory, 'stores.sqlite')
    const stores = openSqliteStores({ path })
    migrateSqlite(stores.database, () =>
      stores.database.exec('CREATE TABLE IF NOT EXISTS app_settings (name TEXT PRIMARY KEY, value TEXT)'),
    )
    stores.close()
    const reopened = openSqliteStores({ path })
    try {
      expect(tables(reopened.database, 'app_%')).toEqual([{ name: 'app_settings' }])
      expect(tables(reopened.database, 'outbox')).toEqual([{ name: 'outbox' }])
    } finally {
      reopened.close()
    }
  })
})
