/**
 * The inbox's two durability modes on a WAL file opened with synchronous=FULL: `pipelined` (default) commits
 * under synchronous=NORMAL and acknowledges after an fdatasync of the WAL off the event loop; `commit` syncs
 * inside COMMIT. Both acknowledge only what another connection already reads, and both leave the connection
 * at synchronous=FULL for every other statement.
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inboxDelivery } from '@adwire/store-contract'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-inbox-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const delivery = (scope: string, key: string) => inboxDelivery(scope, key)

describe.each(['pipelined', 'commit'] as const)('the SQLite inbox, durability %s', (durability) => {
  it('acknowledges each delivery once it is committed, and leaves synchronous=FULL on the connection', async () => {
    const path = join(directory, `${durability}.db`)
    const stores = openSqliteStores({ path })
    const peer = openSqliteStores({ path })
    try {
      stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
      const inbox = stores.createInbox({
        write: (event) => void insert.run(event.idempotencyKey),
        durability,
      })
      const seen = peer.database
        .prepare<[string], number>('SELECT count(*) FROM events WHERE key = ?')
        .pluck()
      const keys = Array.from({ length: 200 }, (_, index) => `key-${durability}-${index}`)
      // Every acknowledgement is checked against another connection at the moment it arrives.
      const visibleWhenAcknowledged = await Promise.all(
        keys.map((key) =>
          inbox.accept(delivery('seller', key)).then((outcome) => [outcome.kind, seen.get(key)]),
        ),
      )
      expect(visibleWhenAcknowledged).toEqual(keys.map(() => ['published', 1]))
      expect(stores.database.pragma('synchronous', { simple: true })).toBe(2)
      // A duplicate is answered from the committed claim, again after the sync.
      expect(await inbox.accept(delivery('seller', keys[0]!))).toEqual({
        kind: 'claim',
        claim: { kind: 'completed', result: null },
      })
      expect(peer.database.prepare('SELECT count(*) FROM events').pluck().get()).toBe(200)
    } finally {
      stores.close()
      peer.close()
    }
  })

  it('rolls back only the delivery whose writer failed', async () => {
    const path = join(directory, `${durability}-failing.db`)
    const stores = openSqliteStores({ path })
    try {
      stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
      const inbox = stores.createInbox({
        write: (event) => {
          insert.run(event.idempotencyKey)
          if (event.idempotencyKey.endsWith('-bad')) throw new Error('the writer failed')
        },
        durability,
      })
      const results = await Promise.allSettled(
        ['a', 'b-bad', 'c'].map((key) => inbox.accept(delivery('failing', key))),
      )
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      expect(stores.database.prepare('SELECT key FROM events ORDER BY key').pluck().all()).toEqual(['a', 'c'])
      expect(stores.database.pragma('synchronous', { simple: true })).toBe(2)
    } finally {
      stores.close()
    }
  })

  it('redoes a group with a failed delivery: the others kept once, the failed one refused without a second try', async () => {
    const path = join(directory, `${durability}-redo.db`)
    const stores = openSqliteStores({ path })
    try {
      stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
      const calls: string[] = []
      const inbox = stores.createInbox({
        write: (event) => {
          calls.push(event.idempotencyKey)
          insert.run(event.idempotencyKey)
          // Fails at its first write only: it is still refused, as it would be in a savepoint of its own.
          if (event.idempotencyKey === 'b-once' && calls.filter((key) => key === 'b-once').length === 1)
            throw new Error('the writer failed')
        },
        durability,
      })
      const results = await Promise.allSettled(
        ['a', 'b-once', 'c', 'd'].map((key) => inbox.accept(delivery('redo', key))),
      )
      expect(results.map((result) => result.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
      ])
      // The first pass wrote `a` and failed at `b-once`; the redo wrote `a` again, then `c` and `d`.
      expect(calls).toEqual(['a', 'b-once', 'a', 'c', 'd'])
      expect(stores.database.prepare('SELECT key FROM events ORDER BY key').pluck().all()).toEqual([
        'a',
        'c',
        'd',
      ])
      expect(
        stores.database.prepare(`SELECT key FROM claims WHERE scope = 'redo' ORDER BY key`).pluck().all(),
      ).toEqual(['a', 'c', 'd'])
      // The refused delivery left nothing: its retry is a first delivery.
      expect((await inbox.accept(delivery('redo', 'b-once'))).kind).toBe('published')
      expect(stores.database.pragma('synchronous', { simple: true })).toBe(2)
    } finally {
      stores.close()
    }
  })

  it('rolls back failed deliveries whose savepoint journal outgrows 64 KiB (held in memory)', async () => {
    const path = join(directory, `${durability}-large-journal.db`)
    const stores = openSqliteStores({ path })
    try {
      expect(stores.database.pragma('temp_store', { simple: true })).toBe(2)
      const database = stores.database
      // Forty rows of about a page each: a delivery that updates them all journals some 160 KiB of pages.
      database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      database.exec('CREATE TABLE tallies (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, pad TEXT NOT NULL)')
      const tally = database.prepare('INSERT INTO tallies (id, n, pad) VALUES (?, 0, ?)')
      for (let id = 1; id <= 40; id += 1) tally.run(id, 'p'.repeat(3000))
      const insert = database.prepare('INSERT INTO events (key) VALUES (?)')
      const count = database.prepare('UPDATE tallies SET n = n + 1')
      const inbox = stores.createInbox({
        write: (event) => {
          count.run()
          insert.run(event.idempotencyKey)
          if (event.idempotencyKey.endsWith('-bad')) throw new Error('the writer failed')
        },
        durability,
      })
      const keys = Array.from({ length: 30 }, (_, index) =>
        index % 7 === 3 || index === 29 ? `journal-${index}-bad` : `journal-${index}-ok`,
      )
      const deliveries = keys.map((key) => delivery('journal', key))
      // Accepted in one turn of the event loop: one group, one transaction.
      const results = await Promise.allSettled(deliveries.map((each) => inbox.accept(each)))
      expect(results.map((result) => result.status)).toEqual(
        keys.map((key) => (key.endsWith('-bad') ? 'rejected' : 'fulfilled')),
      )
      const good = keys.filter((key) => key.endsWith('-ok')).sort()
      expect(database.prepare('SELECT DISTINCT n FROM tallies').pluck().all()).toEqual([good.length])
      expect(database.prepare('SELECT key FROM events ORDER BY key').pluck().all()).toEqual(good)
      expect(
        database.prepare(`SELECT key FROM claims WHERE scope = 'journal' ORDER BY key`).pluck().all(),
      ).toEqual(good)
      const kept = deliveries
        .filter((each) => each.claim.key.endsWith('-ok'))
        .map((each) => each.nonce!.nonce)
        .sort()
      expect(
        database
          .prepare(`SELECT nonce FROM replay_nonces WHERE keyid = 'kid-journal' ORDER BY nonce`)
          .pluck()
          .all(),
      ).toEqual(kept)
    } finally {
      stores.close()
    }
  })
})

it('an in-memory database commits as before (nothing to sync)', async () => {
  const stores = openSqliteStores({ path: ':memory:' })
  try {
    stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
    const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
    const inbox = stores.createInbox({ write: (event) => void insert.run(event.idempotencyKey) })
    expect(await inbox.accept(delivery('memory', 'one'))).toMatchObject({ kind: 'published' })
  } finally {
    stores.close()
  }
})

describe('the SQLite inbox and the write lock of another connection', () => {
  it('waits for the lock on the event loop (timers run meanwhile) and takes the arrivals into its group', async () => {
    const path = join(directory, 'lock.db')
    const stores = openSqliteStores({ path, busyTimeoutMs: 5_000 })
    const holder = openSqliteStores({ path })
    try {
      stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
      const groups: number[] = []
      let inGroup = 0
      const inbox = stores.createInbox({
        write: (event) => {
          inGroup += 1
          insert.run(event.idempotencyKey)
        },
      })
      holder.database.exec('BEGIN IMMEDIATE')
      const first = inbox.accept(delivery('lock', 'k-1'))
      // SQLite's own busy handler would sleep this thread: neither these timers nor the release could run.
      let ticks = 0
      const ticking = setInterval(() => (ticks += 1), 2)
      await new Promise((resolve) => setTimeout(resolve, 60))
      const later = [inbox.accept(delivery('lock', 'k-2')), inbox.accept(delivery('lock', 'k-3'))]
      await new Promise((resolve) => setTimeout(resolve, 20))
      holder.database.exec('COMMIT')
      const outcomes = await Promise.all([first, ...later])
      clearInterval(ticking)
      groups.push(inGroup)
      expect(ticks).toBeGreaterThan(5)
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['published', 'published', 'published'])
      // The two that arrived while the lock was awaited were decided in the same transaction as the first.
      expect(groups).toEqual([3])
      expect(stores.database.prepare('SELECT count(*) FROM events').pluck().get()).toBe(3)
      expect(stores.database.pragma('busy_timeout', { simple: true })).toBe(5_000)
    } finally {
      holder.close()
      stores.close()
    }
  })

  it('gives up after the busy timeout with store_unavailable, keeping nothing', async () => {
    const path = join(directory, 'lock-timeout.db')
    const stores = openSqliteStores({ path, busyTimeoutMs: 50 })
    const holder = openSqliteStores({ path })
    try {
      stores.database.exec('CREATE TABLE events (key TEXT PRIMARY KEY)')
      const insert = stores.database.prepare('INSERT INTO events (key) VALUES (?)')
      const inbox = stores.createInbox({ write: (event) => void insert.run(event.idempotencyKey) })
      holder.database.exec('BEGIN IMMEDIATE')
      const refused = await inbox.accept(delivery('lock', 'k-timeout')).then(
        () => undefined,
        (error: unknown) => error,
      )
      holder.database.exec('COMMIT')
      expect(refused).toMatchObject({ code: 'store_unavailable' })
      // Once the lock is free the same delivery goes through.
      expect((await inbox.accept(delivery('lock', 'k-timeout'))).kind).toBe('published')
    } finally {
      holder.close()
      stores.close()
    }
  })
})

describe('the SQLite inbox commits a group under the durability it was given', () => {
  it.each([
    ['pipelined', 1],
    ['commit', 2],
  ] as const)('%s: synchronous is %i inside every group, FULL again after', async (durability, inside) => {
    const path = join(directory, `sync-${durability}.db`)
    const stores = openSqliteStores({ path })
    try {
      const seen: number[] = []
      const inbox = stores.createInbox({
        write: () => void seen.push(Number(stores.database.pragma('synchronous', { simple: true }))),
        durability,
      })
      // Several groups, one after the other: the setting is applied again for each.
      for (let round = 0; round < 4; round += 1) {
        await Promise.all(
          [1, 2, 3].map((index) => inbox.accept(delivery('sync', `${durability}-${round}-${index}`))),
        )
        expect(stores.database.pragma('synchronous', { simple: true })).toBe(2)
      }
      expect(seen).toEqual(Array(12).fill(inside))
    } finally {
      stores.close()
    }
  })
})

describe('the SQLite inbox and its WAL file handle', () => {
  /** This process's open descriptors on `file` (Linux: /proc/self/fd). */
  const descriptorsOn = (file: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        // Once the last connection closes SQLite deletes the WAL file: a descriptor left open then reads so.
        const target = readlinkSync(`/proc/self/fd/${fd}`)
        return target === file || target === `${file} (deleted)`
      } catch {
        return false
      }
    }).length

  // The descriptors are read from /proc, which only Linux has.
  it.skipIf(!existsSync('/proc/self/fd'))(
    'closes the handle it syncs the WAL with when the stores close',
    async () => {
      const path = join(directory, 'handle.db')
      const stores = openSqliteStores({ path })
      const inbox = stores.createInbox({ write: () => {} })
      await inbox.accept(delivery('handle', 'k-1'))
      const wal = realpathSync(`${path}-wal`)
      // SQLite's own descriptor and the inbox's.
      const open = descriptorsOn(wal)
      expect(open).toBeGreaterThanOrEqual(2)
      stores.close()
      for (let wait = 0; wait < 50 && descriptorsOn(wal) > 0; wait += 1)
        await new Promise((resolve) => setTimeout(resolve, 10))
      expect(descriptorsOn(wal)).toBe(0)
    },
  )
})

describe('the SQLite inbox after its stores closed', () => {
  it('refuses a delivery at once instead of holding it', async () => {
    const stores = openSqliteStores({ path: join(directory, 'closed.db') })
    const inbox = stores.createInbox({ write: () => {} })
    stores.close()
    const refused = await inbox.accept(delivery('closed', 'k-1')).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toMatchObject({ code: expect.stringMatching(/^store_/) })
  })
})
