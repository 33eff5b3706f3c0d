/**
 * The transactional inbox on SQLite, with group commit: the deliveries that reach `accept` in one turn of
 * the event loop (and those arriving while the previous group commits) share one IMMEDIATE transaction and so
 * one WAL fsync, and one delivery's failure rolls back only its own writes: the group runs without savepoints
 * and, only when one of its deliveries fails, is rolled back and redone with a savepoint each. A lone delivery
 * waits for nothing but `setImmediate`.
 *
 * The connection is the process's one connection, so nothing else may run a statement while a group is open.
 * Nothing can: the group starts from a `setImmediate` callback (the microtask queue is empty then) and, as long
 * as the writer does not wait for I/O, everything until COMMIT runs in the microtasks of the group's own
 * promises, before any other callback of the event loop.
 */
import { open, type FileHandle } from 'node:fs/promises'
import type Database from 'better-sqlite3'
import {
  acceptInTransaction,
  type ClaimStore,
  type ConvergenceStore,
  type DeliveryInbox,
  type InboxDelivery,
  type InboxOutcome,
  type InboxTransaction,
  type ReceivedEvent,
} from '@adwire/webhooks'
import type { ReplayStore } from '@adwire/http-signatures'
import type { SqliteClaimStore } from './claim-store.js'
import type { SqliteConvergenceStore } from './convergence-store.js'
import { guard, toStoreError } from './errors.js'
import type { SqliteReplayStore } from './replay-store.js'

/** How the inbox writes events, and how large a group may grow. */
export interface SqliteInboxOptions {
  /**
   * Writes the published event with synchronous statements on the stores' connection (`stores.database`),
   * inside the delivery's transaction. It must not wait for I/O: the transaction stays open while it waits.
   * Throwing rolls the delivery back (the receiver answers 503 `publish_failed`). When a delivery of its group
   * fails, the deliveries before it are written again (their first writes rolled back with the transaction).
   */
  readonly write: (event: ReceivedEvent) => void | Promise<void>
  /** Most deliveries in one transaction (default 256). */
  readonly maxGroup?: number
  /**
   * On a file opened with `synchronous: 'full'`: `'pipelined'` (the default) commits a group without waiting
   * for the disk and then syncs the WAL file on the libuv thread pool, acknowledging the group's deliveries
   * only once that sync is done, so the event loop verifies and writes the next group while the disk
   * works. An acknowledged delivery is as durable as with `'commit'`, which syncs inside COMMIT on the event
   * loop. Either way SQLite's checkpoints sync as `synchronous=FULL` does.
   */
  readonly durability?: 'pipelined' | 'commit'
}

interface Pending {
  readonly delivery: InboxDelivery
  readonly resolve: (outcome: InboxOutcome) => void
  readonly reject: (error: unknown) => void
}

/** A committed delivery waiting for the WAL sync that makes it durable. */
interface Committed {
  readonly settle: () => void
  readonly reject: (error: unknown) => void
}

/**
 * @example
 * const inbox = stores.createInbox({ write: (event) => insertEvent.run(event.idempotencyKey, event.body) })
 * const receiver = createWebhookReceiver({ registration, claims: stores.claims,
 *   convergence: stores.convergence, replayStore: stores.replay, inbox })
 */
export function createSqliteInbox(
  database: Database.Database,
  stores: {
    readonly claims: SqliteClaimStore
    readonly convergence: SqliteConvergenceStore
    readonly replay: SqliteReplayStore
  },
  options: SqliteInboxOptions,
): DeliveryInbox & {
  /** Closes the WAL file handle (the stores call it when they close). */ release(): void
} {
  const maxGroup = options.maxGroup ?? 256
  const transaction = inSavepoint(stores, options.write)
  const begin = database.prepare('BEGIN IMMEDIATE')
  const commit = database.prepare('COMMIT')
  const rollback = database.prepare('ROLLBACK')
  const savepoint = database.prepare('SAVEPOINT adwire_inbox_delivery')
  const release = database.prepare('RELEASE adwire_inbox_delivery')
  const rollbackTo = database.prepare('ROLLBACK TO adwire_inbox_delivery')
  const queue: Pending[] = []
  let scheduled = false
  let running = false
  // The write lock is waited for on the event loop (see beginWithoutBlocking), not in SQLite's busy handler.
  const busyTimeoutMs = Number(database.pragma('busy_timeout', { simple: true }))
  // PRAGMAs compiled at each call: SQLite applies these settings when it compiles the statement, so a prepared
  // PRAGMA run again does not reliably apply its value again. Through `exec` (compiled, run and finalized in
  // one native call) rather than `database.pragma()`, which costs about ten times as much (four a group).
  const setting = (pragma: string) => () => database.exec(`PRAGMA ${pragma}`)
  const noBusyWait = setting('busy_timeout = 0')
  const busyWait = setting(`busy_timeout = ${busyTimeoutMs}`)

  // Pipelined durability: COMMIT under synchronous=NORMAL (the WAL written, not synced), then one fdatasync
  // of the WAL file off the event loop for every group committed since the last one began.
  const pipelined =
    (options.durability ?? 'pipelined') === 'pipelined' &&
    !database.memory &&
    String(database.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal' &&
    Number(database.pragma('synchronous', { simple: true })) === 2
  const deferSync = setting('synchronous = NORMAL')
  const syncEachCommit = setting('synchronous = FULL')
  let wal: Promise<FileHandle> | undefined
  /** Forgets the WAL file handle and closes it (after a failed sync, or when the stores close). */
  function dropWal(): void {
    const handle = wal
    wal = undefined
    void handle?.then((opened) => opened.close()).catch(() => {})
  }
  const unsynced: Committed[] = []
  let syncing = false

  async function syncWal(): Promise<void> {
    syncing = true
    try {
      while (unsynced.length > 0) {
        const batch = unsynced.splice(0)
        try {
          wal ??= open(`${database.name}-wal`, 'r')
          await (await wal).datasync()
          for (const committed of batch) committed.settle()
        } catch (error) {
          dropWal()
          // Committed but perhaps not on the disk: the sender is told to retry, and the retry is a duplicate.
          const failure = toStoreError(error, database)
          for (const committed of batch) committed.reject(failure)
        }
      }
    } finally {
      syncing = false
    }
  }

  /**
   * BEGIN IMMEDIATE without blocking the event loop while another process holds the write lock: SQLite's busy
   * handler sleeps the whole thread (1, 2, 5, 10 … 100 ms steps), so a receiver sharing the file with another
   * process would stop verifying and parsing while it waits, and often sleep long after the lock is free.
   * Here the attempt is repeated every millisecond (up to the connection's busy timeout) and the deliveries
   * arriving meanwhile join the group.
   */
  async function beginWithoutBlocking(): Promise<void> {
    const deadline = performance.now() + busyTimeoutMs
    noBusyWait()
    try {
      for (;;) {
        try {
          begin.run()
          return
        } catch (error) {
          const code = (error as { code?: unknown }).code
          if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || performance.now() >= deadline)
            throw error
        }
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
    } finally {
      if (database.open) busyWait()
    }
  }

  function schedule(): void {
    if (scheduled || running || queue.length === 0) return
    scheduled = true
    setImmediate(() => void flush())
  }

  async function flush(): Promise<void> {
    scheduled = false
    running = true
    let group: Pending[] = []
    const settled: Array<() => void> = []
    try {
      try {
        if (pipelined) deferSync()
        await beginWithoutBlocking()
      } catch (error) {
        throw toStoreError(error, database)
      } finally {
        // Taken once the lock is held (or the attempt failed): those that arrived while it was awaited join.
        group = queue.splice(0, maxGroup)
      }
      // Optimistically without savepoints: a savepoint costs two statements a delivery, and SQLite copies into
      // its journal every page the delivery changes. When a delivery fails, the whole transaction is rolled back
      // and the group redone with a savepoint each, the failed delivery refused without running it again.
      const outcomes: InboxOutcome[] = []
      let failed = -1
      let failure: unknown
      for (const pending of group) {
        try {
          outcomes.push(await acceptInTransaction(transaction, pending.delivery))
        } catch (error) {
          failed = outcomes.length
          failure = error
          break
        }
      }
      if (failed < 0) {
        for (const [index, pending] of group.entries()) {
          const outcome = outcomes[index]!
          settled.push(() => pending.resolve(outcome))
        }
      } else {
        // SQLite ends the transaction itself on some errors (a full disk, an I/O error): the group fails whole.
        if (!database.inTransaction) throw failure
        rollback.run()
        try {
          await beginWithoutBlocking()
        } catch (error) {
          throw toStoreError(error, database)
        }
        for (const [index, pending] of group.entries()) {
          if (index === failed) {
            settled.push(() => pending.reject(toStoreError(failure, database)))
            continue
          }
          savepoint.run()
          try {
            const outcome = await acceptInTransaction(transaction, pending.delivery)
            release.run()
            settled.push(() => pending.resolve(outcome))
          } catch (error) {
            rollbackTo.run()
            release.run()
            settled.push(() => pending.reject(toStoreError(error, database)))
          }
        }
      }
      guard(database, () => commit.run())
      if (pipelined) {
        syncEachCommit()
        for (const [index, settle] of settled.entries())
          unsynced.push({ settle, reject: (error) => group[index]!.reject(error) })
        if (!syncing) void syncWal()
      } else {
        for (const settle of settled) settle()
      }
    } catch (error) {
      if (database.open && database.inTransaction) {
        try {
          rollback.run()
        } catch {
          // The connection is gone; the transaction with it.
        }
      }
      const failure = toStoreError(error, database)
      for (const pending of group) pending.reject(failure)
    } finally {
      if (pipelined && database.open && !database.inTransaction) {
        try {
          syncEachCommit()
        } catch {
          // Closed under us: nothing more commits on this connection.
        }
      }
      running = false
      schedule()
    }
  }

  return {
    accept(delivery) {
      return new Promise<InboxOutcome>((resolve, reject) => {
        queue.push({ delivery, resolve, reject })
        schedule()
      })
    },
    release: dropWal,
  }
}

/**
 * The stores as a delivery's savepoint sees them: the decisions that are one transaction of their own elsewhere
 * (remember, claim, observe) run their statements straight in the savepoint, which the inbox rolls back when
 * the delivery fails; better-sqlite3 would otherwise open and release a nested savepoint around each.
 */
function inSavepoint(
  stores: {
    readonly claims: SqliteClaimStore
    readonly convergence: SqliteConvergenceStore
    readonly replay: SqliteReplayStore
  },
  write: SqliteInboxOptions['write'],
): InboxTransaction {
  const { claims, convergence, replay } = stores
  const claimStore: ClaimStore = {
    claim: (input) => claims.claimInTransaction(input),
    complete: (ref, now, result) => claims.complete(ref, now, result),
    release: (ref) => claims.release(ref),
    sweep: (now) => claims.sweep(now),
  }
  const convergenceStore: ConvergenceStore = {
    observe: (observation) => convergence.observeInTransaction(observation),
    settle: (sender, taskId, deliveryKey, now) => convergence.settle(sender, taskId, deliveryKey, now),
    release: (sender, taskId, deliveryKey) => convergence.release(sender, taskId, deliveryKey),
    sweep: (now) => convergence.sweep(now),
  }
  const replayStore: ReplayStore = {
    atCapacity: (keyid, cap, now) => replay.atCapacity(keyid, cap, now),
    seen: (keyid, nonce, now) => replay.seen(keyid, nonce, now),
    remember: (keyid, nonce, expiresAt, cap, now) =>
      replay.rememberInTransaction(keyid, nonce, expiresAt, cap, now),
  }
  return { claims: claimStore, convergence: convergenceStore, replay: replayStore, write }
}
