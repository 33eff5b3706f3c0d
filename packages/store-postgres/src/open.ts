/**
 * Opens the four stores on one pool and one schema, migrating the schema first.
 */
import pg from 'pg'
import type { DeliveryInbox } from '@adwire/webhooks'
import { PostgresClaimStore } from './claim-store.js'
import { PostgresConvergenceStore } from './convergence-store.js'
import {
  Database,
  assertSchemaName,
  transactionPolicy,
  type IsolationLevel,
  type RetryEvent,
  type RetryOptions,
} from './database.js'
import { StoreError } from './errors.js'
import { createPostgresInbox, type PostgresInboxOptions } from './inbox.js'
import { migrate } from './migrations.js'
import { ACTIVITY_PARTITIONS, OUTBOX_PARTITIONS, PostgresOutboxStore } from './outbox-store.js'
import { PostgresReplayStore } from './replay-store.js'

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database`; used to create a pool when `pool` is not given. */
  readonly connectionString?: string
  /** A pool you own; `close()` leaves it open. */
  readonly pool?: pg.Pool
  /** The schema holding the tables, created if missing. A plain lowercase identifier; default `adwire`. */
  readonly schema?: string
  /** The size of the pool created from `connectionString` (default 10). */
  readonly maxConnections?: number
  /**
   * The isolation level of every transaction the stores run: `'read committed'`, `'repeatable read'` or
   * `'serializable'`. Unset (the default): the server's default, PostgreSQL's READ COMMITTED. On a pool the
   * stores create, each connection starts at this level (`default_transaction_isolation`), at no cost per
   * statement; on a pool you give, each single statement of the stores is wrapped in its own
   * `BEGIN ISOLATION LEVEL … COMMIT` (two more round trips), and your own statements keep the pool's default.
   */
  readonly isolation?: IsolationLevel
  /**
   * How a transaction of the stores that failed with a serialisation failure (SQLSTATE 40001) or a deadlock
   * (40P01) is run again: `attempts` in all (default 10), after a jittered back-off doubling from
   * `baseDelayMs` (default 5) up to `maxDelayMs` (default 250). `{ attempts: 1 }` never retries. When every
   * attempt failed, the call rejects with `store_retries_exhausted`.
   */
  readonly retry?: RetryOptions
  /**
   * Called before each retry (a metric or a log line: what was retried, the failed attempt's number, the
   * SQLSTATE, the back-off). It must not throw; what it throws is ignored.
   */
  readonly onRetry?: (event: RetryEvent) => void
  /**
   * The caller's clock in Unix seconds (default: `Date.now() / 1000`), read once on open to create the time
   * partitions ahead of it; afterwards every `sweep(now)` maintains them for the `now` it is given.
   */
  readonly now?: () => number
}

/** How many rows a {@link PostgresStores.sweep} deleted, per store. */
export interface SweepCounts {
  readonly claims: number
  readonly convergence: number
  readonly replay: number
  /** Delivered, failed and superseded outbox entries past their deadline. */
  readonly outbox: number
}

export interface PostgresStores {
  readonly claims: PostgresClaimStore
  readonly convergence: PostgresConvergenceStore
  readonly outbox: PostgresOutboxStore
  readonly replay: PostgresReplayStore
  /**
   * A transactional inbox for a publisher writing into this schema (see `DeliveryInbox` in @adwire/webhooks):
   * each delivery's nonce, claim, convergence record, event (written by `options.write` on the transaction's
   * connection) and acknowledgement commit together, and deliveries arriving together share one commit.
   */
  createInbox(options: PostgresInboxOptions): DeliveryInbox
  /**
   * Runs `body` in one transaction on one connection: every store call made inside it (an outbox `enqueue`, a
   * claim) and the caller's own statements on `client` (or on {@link PostgresStores.connection}) commit
   * together, or none does when `body` throws. The outbox worker's lease and record never join it; nested calls
   * join the open one. Keep it short: no network call inside. It is not retried (the stores cannot know what
   * else `body` did): after a serialisation failure or a deadlock it rejects with `store_unavailable`, and the
   * caller runs it again.
   *
   * @example
   * await stores.transaction(async (client) => {
   *   await client.query('UPDATE buys SET status = $1 WHERE id = $2', ['paused', id])
   *   await sender.notify(registration, event)
   * })
   */
  transaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T>
  /** Where the caller's statements go now: the open transaction's connection inside `transaction`, else the pool. */
  connection(): pg.Pool | pg.PoolClient
  /** The pool the stores run on (the given one, or the one created from the connection string). */
  readonly pool: pg.Pool
  /**
   * Expires everything past its retention at `now` (Unix seconds): rotates the generations of claims, terminal
   * records and nonces and drops those whose rows have all expired, drops the outbox's and webhook_activity's
   * time partitions past retention and creates those ahead of `now`.
   * Run it every minute or so from one instance or all.
   */
  sweep(now: number): Promise<SweepCounts>
  /** Ends the pool if these stores created it; the stores refuse work afterwards (`store_closed`). */
  close(): Promise<void>
}

/** How long a new connection may take before the call fails with `store_unavailable`. */
const CONNECT_TIMEOUT_MS = 5_000

/**
 * Opens the PostgreSQL stores: validates the options, creates the pool unless one is given, and brings the
 * schema to the version this release knows (concurrent openers are safe; a newer schema is refused with
 * `store_schema_newer`; an unreachable server fails with `store_unavailable`).
 *
 * @example
 * const stores = await openPostgresStores({ connectionString: process.env.DATABASE_URL })
 * const result = await stores.claims.claim({ namespace: 'webhook', scope: sender, key, fingerprint, now: Date.now() / 1000, leaseSeconds: 30, retentionSeconds: 86_400 })
 * setInterval(() => void stores.sweep(Date.now() / 1000), 60_000).unref()
 */
export async function openPostgresStores(options: PostgresStoreOptions): Promise<PostgresStores> {
  const schema = options.schema ?? 'adwire'
  assertSchemaName(schema)
  if (options.pool === undefined && !options.connectionString) {
    throw new StoreError('store_invalid_options', 'give openPostgresStores a connectionString or a pool')
  }
  const max = options.maxConnections
  if (max !== undefined && !(Number.isSafeInteger(max) && max >= 1)) {
    throw new StoreError('store_invalid_options', `maxConnections must be a positive integer, not ${max}`)
  }
  const owned = options.pool === undefined
  const policy = transactionPolicy(options.isolation, options.retry, options.onRetry, !owned)
  const pool =
    options.pool ??
    new pg.Pool({
      connectionString: options.connectionString,
      max: max ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Every session starts at the chosen level, so that a single statement needs no BEGIN of its own.
      ...(policy.isolation
        ? { options: `-c default_transaction_isolation=${policy.isolation.replaceAll(' ', '\\ ')}` }
        : {}),
    })
  // An idle connection that breaks emits 'error' on the pool, which would crash the process without a
  // listener; the next statement fails (store_unavailable) and a new connection is made.
  if (owned) pool.on('error', () => {})

  const database = new Database(pool, schema, policy)
  try {
    await migrate(database)
  } catch (error) {
    if (owned) await pool.end().catch(() => {})
    throw error
  }
  const claims = new PostgresClaimStore(database)
  const convergence = new PostgresConvergenceStore(database)
  const outbox = new PostgresOutboxStore(database)
  const replay = new PostgresReplayStore(database)
  try {
    // The partitions ahead of the caller's clock; a step that met a lock is left to the first sweep.
    const now = options.now?.() ?? Date.now() / 1000
    await outbox.maintain(OUTBOX_PARTITIONS, now)
    await outbox.maintain(ACTIVITY_PARTITIONS, now)
    await claims.maintain(now)
    await convergence.maintain(now)
    await replay.maintain(now)
  } catch (error) {
    if (owned) await pool.end().catch(() => {})
    throw error
  }
  let closing: Promise<void> | undefined
  return {
    claims,
    convergence,
    outbox,
    replay,
    pool,
    createInbox: (options) => createPostgresInbox(database, options),
    transaction: (body) => database.callerTransaction(body),
    connection: () => database.connection(),
    async sweep(now: number): Promise<SweepCounts> {
      return {
        claims: await claims.sweep(now),
        convergence: await convergence.sweep(now),
        replay: await replay.sweep(now),
        outbox: await outbox.sweep(now),
      }
    },
    close(): Promise<void> {
      closing ??= (async () => {
        database.markClosed()
        if (owned) await pool.end()
      })()
      return closing
    },
  }
}
