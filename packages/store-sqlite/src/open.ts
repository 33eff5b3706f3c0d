import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import type { ReplayStore } from '@adwire/http-signatures'
import type { ClaimStore, ConvergenceStore, DeliveryInbox, OutboxStore } from '@adwire/webhooks'
import { SqliteClaimStore } from './claim-store.js'
import { SqliteConvergenceStore } from './convergence-store.js'
import { StoreError, toStoreError } from './errors.js'
import { createSqliteInbox, type SqliteInboxOptions } from './inbox.js'
import { migrate } from './migrations.js'
import { SqliteOutboxStore } from './outbox-store.js'
import { SqliteReplayStore } from './replay-store.js'
import { gated, WriteGate } from './transaction.js'
import { enableWal } from './wal.js'

/** How to open the file. */
export interface SqliteStoreOptions {
  /** The database file; its directory is created if missing. `':memory:'` is for tests only (nothing is shared or kept). */
  readonly path: string
  /**
   * `'full'` (the default) syncs the WAL on every commit: an acknowledged claim survives a power cut.
   * `'normal'` syncs only at checkpoints: it survives a process crash, but a power cut may lose the last commits.
   */
  readonly synchronous?: 'full' | 'normal'
  /** How long an operation waits for another connection's write lock before failing with `store_unavailable` (default 5000). */
  readonly busyTimeoutMs?: number
}

/** How many expired records one {@link SqliteStores.sweep} deleted, per store. */
export interface SweepCounts {
  readonly claims: number
  readonly convergence: number
  readonly replay: number
  /** Finished outbox entries whose deadline passed 30 days ago (their webhook_activity rows with them). */
  readonly outbox: number
}

/** The stores on one SQLite connection. */
export interface SqliteStores {
  readonly claims: ClaimStore
  readonly convergence: ConvergenceStore
  readonly outbox: OutboxStore
  readonly replay: ReplayStore
  /** The better-sqlite3 connection, for inspection, backups and tests. Do not write to the stores' tables. */
  readonly database: Database.Database
  /**
   * A transactional inbox for a publisher writing into this file (see `DeliveryInbox` in @adwire/webhooks):
   * each delivery's nonce, claim, convergence record, event (written by `options.write`) and acknowledgement
   * commit together, and deliveries arriving together share one transaction and one fsync.
   */
  createInbox(options: SqliteInboxOptions): DeliveryInbox
  /**
   * Deletes the claims, task terminals and replay nonces expired at `now` (Unix seconds), and the outbox's
   * finished entries and webhook_activity rows past their 30 days, in one transaction.
   */
  sweep(now: number): Promise<SweepCounts>
  /**
   * Runs `body` in one transaction on this connection: every store call made inside it (an outbox `enqueue`, a
   * claim) and every statement of the caller made through {@link SqliteStores.exec} commit together, or none does
   * when `body` throws. Meanwhile other work on the connection is queued and runs right after it (it would join the
   * transaction otherwise); transactions take turns in order; the outbox worker's lease and record never join
   * one. Nested calls join the open one. Keep it short: no network call inside.
   *
   * @example
   * await stores.transaction(async () => {
   *   await stores.exec(() => database.prepare('UPDATE buys SET status = ? WHERE id = ?').run('paused', id))
   *   await sender.notify(registration, event)
   * })
   */
  transaction<T>(body: () => Promise<T>): Promise<T>
  /**
   * Runs `work` (the caller's own synchronous statements on {@link SqliteStores.database}) now, or, while another
   * caller's transaction is open, right after it ends and before any other begins, so that it never joins (and is
   * never rolled back with) someone else's transaction. Inside the caller's own transaction it runs at once and
   * joins it.
   */
  exec<T>(work: () => T): Promise<T>
  /** Closes the connection (checkpointing the WAL when it is the last one); later calls fail with `store_closed`. Idempotent. */
  close(): void
}

/**
 * Opens (creating and migrating when needed) a SQLite file holding the webhook dedup claims, terminal
 * convergence, the sender outbox and the RFC 9421 replay nonces, in WAL mode, durable by default
 * (`synchronous=FULL`). Every process and every connection on one file shares the records; each operation is
 * atomic across them.
 *
 * @throws {StoreError} `store_schema_newer` when a newer version of this package migrated the file,
 *   `store_unavailable` when it cannot be opened or locked, `store_corrupt` when it is not a SQLite database,
 *   `store_invalid_options` for unusable options.
 * @example
 * const stores = openSqliteStores({ path: './data/adwire.db' })
 * const receiver = createWebhookReceiver({
 *   registration, publish, claims: stores.claims, convergence: stores.convergence, replayStore: stores.replay,
 * })
 * setInterval(() => void stores.sweep(Date.now() / 1000), 60_000).unref()
 * process.on('SIGTERM', () => stores.close())
 */
export function openSqliteStores(options: SqliteStoreOptions): SqliteStores {
  const { path, synchronous = 'full', busyTimeoutMs = 5_000 } = options
  if (typeof path !== 'string' || path === '') {
    throw new StoreError('store_invalid_options', 'path must be a file path or ":memory:"')
  }
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new StoreError(
      'store_invalid_options',
      `synchronous must be 'full' or 'normal', not ${String(synchronous)}`,
    )
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new StoreError(
      'store_invalid_options',
      `busyTimeoutMs must be a whole number of milliseconds ≥ 0, not ${busyTimeoutMs}`,
    )
  }
  const memory = path === ':memory:'
  let database: Database.Database
  try {
    if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true })
    database = new Database(path, { timeout: busyTimeoutMs })
  } catch (error) {
    throw new StoreError('store_unavailable', `cannot open ${path}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`)
    const journal = enableWal(database, { busyTimeoutMs })
    if (!memory && journal !== 'wal') {
      throw new StoreError(
        'store_unavailable',
        `${path} could not be switched to WAL mode (journal_mode is ${String(journal)})`,
      )
    }
    database.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
    database.pragma('foreign_keys = ON')
    // Savepoints (the inbox gives each delivery one when it redoes a group with a failed delivery) keep the pages
    // they change in a statement journal, which SQLite spills to a temporary file past 64 KiB: a file created per
    // transaction and two writes per page.
    // Held in memory it costs no system call; it only ever serves a rollback inside the open transaction (the
    // WAL alone recovers a crash), so nothing durable depends on it. Temporary tables and sorts stay in memory too.
    database.pragma('temp_store = MEMORY')
    migrate(database)
    return createStores(database)
  } catch (error) {
    database.close()
    throw toStoreError(error)
  }
}

/** The stores on a configured, migrated connection; every statement is prepared here, once. */
function createStores(database: Database.Database): SqliteStores {
  const gate = new WriteGate()
  const claims = new SqliteClaimStore(database, gate)
  const convergence = new SqliteConvergenceStore(database, gate)
  const replay = new SqliteReplayStore(database, gate)
  const outbox = new SqliteOutboxStore(database, gate)
  // The inboxes made on this connection: their WAL file handles are closed with it.
  const inboxes = new Set<ReturnType<typeof createSqliteInbox>>()
  const sweepAll = database.transaction((now: number): SweepCounts => ({
    claims: claims.sweepNow(now),
    convergence: convergence.sweepNow(now),
    replay: replay.sweepNow(now),
    outbox: outbox.sweepNow(now),
  }))
  return {
    claims,
    convergence,
    outbox,
    replay,
    database,
    createInbox: (options) => {
      const inbox = createSqliteInbox(database, { claims, convergence, replay }, options)
      inboxes.add(inbox)
      return { accept: (delivery) => inbox.accept(delivery) }
    },
    sweep: (now) => gated(gate, database, () => sweepAll.immediate(now), true),
    transaction: (body) => gate.run(database, body),
    exec: (work) => gate.exec(database, work),
    close: () => {
      if (database.open) database.close()
      for (const inbox of inboxes) inbox.release()
      inboxes.clear()
    },
  }
}
