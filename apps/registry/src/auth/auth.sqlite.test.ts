import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { expect, it } from 'vitest'
import { authSuite } from '../testing/auth-suite.js'
import { migrateAuthSqlite } from './index.js'

authSuite('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-auth-'))
  const db = new Database(join(dir, 'registry.sqlite'))
  migrateAuthSqlite(db)
  migrateAuthSqlite(db) // idempotent
  return {
    store: { kind: 'sqlite', db },
    async close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
})

it('refuses auth tables written by a newer version', () => {
  const db = new Database(':memory:')
  migrateAuthSqlite(db)
  db.prepare(`UPDATE registry_auth_meta SET value = '99' WHERE name = 'schema_version'`).run()
  expect(() => migrateAuthSqlite(db)).toThrow(/version 99/)
  db.close()
})
