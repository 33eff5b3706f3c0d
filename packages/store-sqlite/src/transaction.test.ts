/**
 * Caller transactions on a SQLite file: an outbox enqueue made inside one commits or rolls back with the
 * caller's own writes; work outside it waits and is never rolled back with it; the worker's lease never joins.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectFinalRollbackReopens, outboxEntry } from '@adwire/store-contract'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores, type SqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-tx-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const entry = (destination: string) =>
  outboxEntry(destination, {
    url: 'https://buyer.example/hook',
    body: '{}',
    createdAt: 1,
    nextAttemptAt: 1,
    deadlineAt: 10_000_000_000,
  })

function open(): SqliteStores {
  const stores = openSqliteStores({ path: join(directory, `${randomUUID()}.db`) })
  stores.database.exec('CREATE TABLE caller_state (id TEXT PRIMARY KEY, status TEXT NOT NULL)')
  return stores
}

/** The caller's own write, made the documented way (through the gate). */
async function writeState(stores: SqliteStores, id: string, status: string) {
  await stores.exec(() =>
    stores.database
      .prepare(
        'INSERT INTO caller_state (id, status) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status',
      )
      .run(id, status),
  )
}

const stateOf = (stores: SqliteStores, id: string) =>
  (
    stores.database.prepare('SELECT status FROM caller_state WHERE id = ?').get(id) as
      { status: string } | undefined
  )?.status

describe('SqliteStores.transaction', () => {
  it('commits the caller write and the enqueue together', async () => {
    const stores = open()
    await stores.transaction(async () => {
      await writeState(stores, 'buy_1', 'paused')
      await stores.outbox.enqueue(entry('d1'))
    })
    expect(stateOf(stores, 'buy_1')).toBe('paused')
    expect(await stores.outbox.pending('d1')).toHaveLength(1)
    stores.close()
  })

  it('rolls both back when the body throws', async () => {
    const stores = open()
    await expect(
      stores.transaction(async () => {
        await writeState(stores, 'buy_1', 'paused')
        await stores.outbox.enqueue(entry('d1'))
        throw new Error('crash between the change and the answer')
      }),
    ).rejects.toThrow('crash between')
    expect(stateOf(stores, 'buy_1')).toBeUndefined()
    expect(await stores.outbox.pending('d1')).toHaveLength(0)
    stores.close()
  })

  it('keeps work from outside the transaction out of it: it waits, and survives its rollback', async () => {
    const stores = open()
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const inside = stores.transaction(async () => {
      await stores.outbox.enqueue(entry('inside'))
      await held
      throw new Error('rolled back')
    })
    // Started outside the transaction's async context while it is open.
    const outside = stores.outbox.enqueue(entry('outside'))
    const outsideState = writeState(stores, 'buy_2', 'active')
    let outsideDone = false
    void outside.then(() => {
      outsideDone = true
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(outsideDone).toBe(false)
    release()
    await expect(inside).rejects.toThrow('rolled back')
    await outside
    await outsideState
    expect(await stores.outbox.pending('inside')).toHaveLength(0)
    expect(await stores.outbox.pending('outside')).toHaveLength(1)
    expect(stateOf(stores, 'buy_2')).toBe('active')
    stores.close()
  })

  it('never lets the worker lease join it (a rollback does not undo a lease)', async () => {
    const stores = open()
    await stores.outbox.enqueue(entry('due'))
    let leased: Promise<unknown> | undefined
    await expect(
      stores.transaction(async () => {
        // Started inside the transaction's context, as a worker woken by an enqueue would be.
        leased = stores.outbox.lease(2, 10, 60)
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await leased).toHaveLength(1)
    // Still leased after the rollback: nobody leases it a second time.
    expect(await stores.outbox.lease(2, 10, 60)).toHaveLength(0)
    stores.close()
  })

  it('runs work queued behind a transaction before the next transaction begins (no starvation)', async () => {
    const stores = open()
    const order: string[] = []
    // A stream of transactions, each started as soon as the previous one ends.
    const stream = (async () => {
      for (let index = 0; index < 20; index += 1)
        await stores.transaction(async () => {
          await stores.outbox.enqueue(entry('stream'))
          await new Promise((resolve) => setTimeout(resolve, 2))
          order.push(`tx${index}`)
        })
    })()
    await new Promise((resolve) => setTimeout(resolve, 5))
    // Work from outside, arriving while the stream runs, goes between two of its transactions, not after all.
    const outside = writeState(stores, 'buy_3', 'active').then(() => order.push('outside'))
    await Promise.all([stream, outside])
    expect(order.indexOf('outside')).toBeGreaterThan(-1)
    expect(order.indexOf('outside')).toBeLessThan(order.length - 1)
    expect(stateOf(stores, 'buy_3')).toBe('active')
    stores.close()
  })

  it('joins an open transaction when nested, and serialises two callers', async () => {
    const stores = open()
    const order: string[] = []
    await Promise.all([
      stores.transaction(async () => {
        order.push('a:start')
        await stores.transaction(async () => {
          await stores.outbox.enqueue(entry('a'))
        })
        await new Promise((resolve) => setTimeout(resolve, 10))
        order.push('a:end')
      }),
      stores.transaction(async () => {
        order.push('b:start')
        await stores.outbox.enqueue(entry('b'))
        order.push('b:end')
      }),
    ])
    expect(order).toEqual(['a:start', 'a:end', 'b:start', 'b:end'])
    expect(await stores.outbox.pending()).toHaveLength(2)
    stores.close()
  })

  it('leaves the buy open when the transaction that queued its final report rolls back', async () => {
    const stores = open()
    await expectFinalRollbackReopens(stores, 'mb_rolled_back')
    stores.close()
  })
})
