/**
 * Migration 2 is additive: a file written by migration 1 opens, and what it holds stays valid.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { SCHEMA_VERSION, openSqliteStores } from './index.js'
import { migrations } from './migrations.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-upgrade-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describe('upgrading a version 1 file', () => {
  it('keeps its pending outbox entries deliverable, concerning no media buy and blocking nothing', async () => {
    const path = join(directory, 'v1.db')
    const raw = new Database(path)
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)')
    raw.exec(migrations[0]!.sql)
    raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)').run()
    raw
      .prepare(
        `INSERT INTO outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at)
         VALUES ('old', 'registration', 'https://buyer.example/hook', 'idem-old-0123456789', '{}', '{}', 'media_buy:["mb_1","k"]', 1000, 1000, 2000)`,
      )
      .run()
    raw.close()

    const stores = openSqliteStores({ path })
    expect(stores.database.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(
      SCHEMA_VERSION,
    )
    expect(await stores.outbox.pending()).toEqual([
      expect.objectContaining({ id: 'old', mediaBuyIds: [], barrier: false, attempts: 0 }),
    ])
    // The old entry names no buy, so a final report of mb_1 does not wait for it; nor is mb_1 closed.
    expect(await stores.outbox.closedMediaBuys(['mb_1'])).toEqual([])
    await stores.outbox.enqueue({
      id: 'final',
      destination: 'reports',
      url: 'https://buyer.example/reports',
      idempotencyKey: 'idem-final-0123456789',
      body: '{}',
      headers: {},
      coalesceKey: null,
      createdAt: 1_000,
      nextAttemptAt: 1_000,
      deadlineAt: 2_000,
      mediaBuyIds: ['mb_1'],
      barrier: true,
    })
    expect((await stores.outbox.lease(1_000, 10, 60)).map((entry) => entry.id)).toEqual(['old', 'final'])
    stores.close()
  })
})
