import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { SCHEMA_VERSION, StoreError, openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-open-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshPath = () => join(directory, `store-${(files += 1)}.db`)

const claimInput = (key: string, now = 1_000) => ({
  namespace: 'webhook' as const,
  scope: 'sender-1',
  key,
  fingerprint: 'a'.repeat(64),
  now,
  leaseSeconds: 30,
  retentionSeconds: 100,
})

/** The StoreError `work` throws or rejects with. */
async function storeError(work: () => unknown): Promise<StoreError> {
  try {
    await work()
  } catch (error) {
    if (StoreError.is(error)) return error
    throw error
  }
  throw new Error('expected a StoreError')
}

describe('openSqliteStores', () => {
  it('sets WAL, synchronous=FULL, foreign keys, the busy timeout and temporary storage in memory by default', () => {
    const stores = openSqliteStores({ path: freshPath() })
    expect(stores.database.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(stores.database.pragma('synchronous', { simple: true })).toBe(2)
    expect(stores.database.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(stores.database.pragma('busy_timeout', { simple: true })).toBe(5_000)
    expect(stores.database.pragma('temp_store', { simple: true })).toBe(2)
    stores.close()
  })

  it('takes synchronous=NORMAL and a busy timeout when asked', () => {
    const stores = openSqliteStores({ path: freshPath(), synchronous: 'normal', busyTimeoutMs: 250 })
    expect(stores.database.pragma('synchronous', { simple: true })).toBe(1)
    expect(stores.database.pragma('busy_timeout', { simple: true })).toBe(250)
    stores.close()
  })

  it('creates the parent directory of the file', () => {
    const path = join(directory, 'nested', 'deeper', 'adwire.db')
    openSqliteStores({ path }).close()
    expect(existsSync(path)).toBe(true)
  })

  it('migrates a new file once; re-opening it is a no-op', () => {
    const path = freshPath()
    const first = openSqliteStores({ path })
    const migrations = () =>
      first.database.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all()
    const applied = migrations()
    expect(applied).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, index) => ({
        version: index + 1,
        applied_at: expect.any(Number),
      })),
    )
    first.close()
    const again = openSqliteStores({ path })
    expect(
      again.database.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all(),
    ).toEqual(applied)
    again.close()
  })

  it('refuses a file migrated by a newer version, leaving it untouched', async () => {
    const path = freshPath()
    const stores = openSqliteStores({ path })
    stores.database
      .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)')
      .run(SCHEMA_VERSION + 1)
    stores.close()
    const error = await storeError(() => openSqliteStores({ path }))
    expect(error.code).toBe('store_schema_newer')
    expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 1}`)
    const raw = new Database(path, { readonly: true })
    expect(raw.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(SCHEMA_VERSION + 1)
    raw.close()
  })

  it('keeps every store across close and re-open', async () => {
    const path = freshPath()
    const before = openSqliteStores({ path })
    const claim = await before.claims.claim(claimInput('kept'))
    if (claim.kind !== 'claimed') throw new Error('expected a claim')
    await before.claims.complete(
      { namespace: 'webhook', scope: 'sender-1', key: 'kept', fence: claim.fence },
      1_001,
      '{"ok":true}',
    )
    const observation = {
      sender: 's',
      taskId: 't',
      terminal: true,
      comparison: 'c',
      deliveryKey: 'd',
      now: 1_000,
      leaseSeconds: 30,
      retentionSeconds: 100,
    }
    expect(await before.convergence.observe(observation)).toBe('proceed')
    await before.convergence.settle('s', 't', 'd', 1_001)
    await before.outbox.enqueue({
      id: 'entry-1',
      destination: 'registration-1',
      url: 'https://buyer.example/hook',
      idempotencyKey: 'idem-0123456789abcdef',
      body: '{"status":"completed"}',
      headers: { 'content-type': 'application/json' },
      coalesceKey: 'media_buy:1',
      createdAt: 1_000,
      nextAttemptAt: 1_000,
      deadlineAt: 2_000,
    })
    const [leased] = await before.outbox.lease(1_000, 10, 60)
    await before.outbox.record(
      'entry-1',
      leased!.fence,
      { kind: 'retry', nextAttemptAt: 1_100, httpStatus: 502, activityStatus: 'failed' },
      1_001,
    )
    expect(await before.replay.remember('kid', 'nonce', 1_300, 10, 1_000)).toBe('stored')
    before.close()

    const after = openSqliteStores({ path })
    expect(await after.claims.claim(claimInput('kept', 1_050))).toEqual({
      kind: 'completed',
      result: '{"ok":true}',
    })
    expect(await after.convergence.observe({ ...observation, deliveryKey: 'e', now: 1_050 })).toBe(
      'duplicate',
    )
    expect(await after.outbox.pending('registration-1')).toEqual([
      expect.objectContaining({
        id: 'entry-1',
        attempts: 1,
        nextAttemptAt: 1_100,
        headers: { 'content-type': 'application/json' },
      }),
    ])
    expect(await after.outbox.activity('registration-1')).toEqual([
      {
        idempotency_key: 'idem-0123456789abcdef',
        status: 'failed',
        http_status_code: 502,
        attempt: 1,
        error_message: null,
        at: 1_001,
      },
    ])
    expect(await after.replay.seen('kid', 'nonce', 1_050)).toBe(true)
    after.close()
  })

  it('sweeps every store in one call, counting what it deleted', async () => {
    const stores = openSqliteStores({ path: freshPath() })
    await stores.claims.claim(claimInput('old'))
    await stores.claims.claim(claimInput('young', 1_090))
    await stores.convergence.observe({
      sender: 's',
      taskId: 't',
      terminal: true,
      comparison: 'c',
      deliveryKey: 'd',
      now: 1_000,
      leaseSeconds: 30,
      retentionSeconds: 50,
    })
    await stores.replay.remember('kid', 'n1', 1_060, 10, 1_000)
    await stores.replay.remember('kid', 'n2', 1_200, 10, 1_000)
    expect(await stores.sweep(1_100)).toEqual({ claims: 1, convergence: 1, replay: 1, outbox: 0 })
    expect(await stores.sweep(1_100)).toEqual({ claims: 0, convergence: 0, replay: 0, outbox: 0 })
    expect(await stores.claims.claim(claimInput('young', 1_100))).toMatchObject({ kind: 'processing' })
    stores.close()
  })

  it('answers store_unavailable when another connection holds the write lock past busyTimeoutMs', async () => {
    const path = freshPath()
    const holder = openSqliteStores({ path })
    const waiter = openSqliteStores({ path, busyTimeoutMs: 50 })
    holder.database.exec('BEGIN IMMEDIATE')
    expect((await storeError(() => waiter.claims.claim(claimInput('locked')))).code).toBe('store_unavailable')
    // Reads go on under WAL.
    expect(await waiter.replay.seen('kid', 'nonce', 1_000)).toBe(false)
    holder.database.exec('ROLLBACK')
    expect((await waiter.claims.claim(claimInput('locked'))).kind).toBe('claimed')
    holder.close()
    waiter.close()
  })

  it('refuses a duplicate outbox id and keeps the entries it would have superseded', async () => {
    const stores = openSqliteStores({ path: freshPath() })
    const entry = {
      id: 'entry-1',
      destination: 'registration-1',
      url: 'https://buyer.example/hook',
      idempotencyKey: 'idem-1',
      body: '{}',
      headers: {},
      coalesceKey: 'media_buy:1',
      createdAt: 1_000,
      nextAttemptAt: 1_000,
      deadlineAt: 2_000,
    }
    await stores.outbox.enqueue(entry)
    expect((await storeError(() => stores.outbox.enqueue({ ...entry, idempotencyKey: 'idem-2' }))).code).toBe(
      'store_duplicate_entry',
    )
    expect((await stores.outbox.pending()).map((item) => item.idempotencyKey)).toEqual(['idem-1'])
    stores.close()
  })

  it('refuses a file that is not a SQLite database', async () => {
    const path = freshPath()
    writeFileSync(
      path,
      'this is not a database, just some text that is long enough to fill a header. '.repeat(20),
    )
    expect((await storeError(() => openSqliteStores({ path }))).code).toBe('store_corrupt')
  })

  it('answers store_closed after close, and close is idempotent', async () => {
    const stores = openSqliteStores({ path: freshPath() })
    stores.close()
    stores.close()
    expect((await storeError(() => stores.claims.claim(claimInput('late')))).code).toBe('store_closed')
    expect((await storeError(() => stores.outbox.pending())).code).toBe('store_closed')
  })

  it('refuses unusable options', async () => {
    expect((await storeError(() => openSqliteStores({ path: '' }))).code).toBe('store_invalid_options')
    expect((await storeError(() => openSqliteStores({ path: freshPath(), busyTimeoutMs: -1 }))).code).toBe(
      'store_invalid_options',
    )
    const synchronous = 'off' as unknown as 'full'
    expect((await storeError(() => openSqliteStores({ path: freshPath(), synchronous }))).code).toBe(
      'store_invalid_options',
    )
  })

  it('opens an in-memory database for tests', async () => {
    const stores = openSqliteStores({ path: ':memory:' })
    expect((await stores.claims.claim(claimInput('memory'))).kind).toBe('claimed')
    stores.close()
  })
})
