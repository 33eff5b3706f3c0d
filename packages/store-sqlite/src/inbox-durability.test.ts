/**
 * The inbox's two durability modes on a WAL file opened with synchronous=FULL: `pipelined` (default) commits
 * under synchronous=NORMAL and acknowledges after an fdatasync of the WAL off the event loop; `commit` syncs
 * inside COMMIT. Both acknowledge only what another connection already reads, and both leave the connection
 * at synchronous=FULL for every other statement.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { InboxDelivery } from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-inbox-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

let counter = 0
function delivery(scope: string, key: string): InboxDelivery {
  counter += 1
  return {
    nonce: { keyid: `kid-${scope}`, nonce: `nonce-${counter}`, expiresAt: 1_360, cap: 100_000 },
    claim: {
      namespace: 'webhook',
      scope,
      key,
      fingerprint: 'f'.repeat(64),
      now: 1_000,
      leaseSeconds: 30,
      retentionSeconds: 86_400,
      maxPerScope: 100_000,
    },
    event: {
      registrationId: 'durability',
      sender: scope,
      shape: 'mcp',
      idempotencyKey: key,
      terminal: false,
      data: null,
      payload: {},
      body: new Uint8Array(),
      receivedAt: 1_000,
    },
  }
}

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
