/**
 * Opens everything the receiver keeps: the @adwire/store-* stores (dedup claims, convergence, replay nonces)
 * and the receiver's own tables, on one SQLite file or one PostgreSQL schema.
 */
import type { ReplayStore } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { createSqliteInboxWorker, openSqliteStores } from '@adwire/store-sqlite'
import type { ClaimStore, ConvergenceStore, DeliveryInbox, ReceivedEvent } from '@adwire/webhooks'
import type { DatabaseConfig } from '../env.js'
import { openReceiverDatabase, type ReceiverDatabaseOptions } from './database.js'
import type { InboxTransactionHandle, ReceiverDatabase } from './types.js'

/** How long verification failures are kept for the page, seconds. */
export const FAILURE_RETENTION_SECONDS = 7 * 86_400

export interface Storage {
  readonly claims: ClaimStore
  readonly convergence: ConvergenceStore
  readonly replay: ReplayStore
  readonly db: ReceiverDatabase
  /**
   * The transactional inbox on this storage: `write` stores the event (through `db`) in the delivery's own
   * transaction, which also holds its nonce, claim and convergence record, shared with the deliveries arriving
   * together.
   */
  createInbox(
    write: (
      event: ReceivedEvent,
      db: ReceiverDatabase,
      transaction?: InboxTransactionHandle,
    ) => Promise<void>,
    /**
     * Stores all the events a group publishes at once (PostgreSQL: one round trip for the group); without it,
     * `write` for each.
     */
    writeGroup?: (
      events: readonly ReceivedEvent[],
      db: ReceiverDatabase,
      transaction?: InboxTransactionHandle,
    ) => Promise<void>,
  ): DeliveryInbox
  /**
   * SQLite only: the transactional inbox on a worker thread with its own connection (see
   * `createSqliteInboxWorker`), the events written there by db/inbox-writer.ts; what the writer logs reaches
   * `onReport`. Closed with the storage.
   */
  readonly createWorkerInbox?: (options: {
    readonly forwarding: boolean
    readonly onReport: (entry: Record<string, unknown>) => void
  }) => DeliveryInbox
  /**
   * Deletes expired dedup records, convergence records, nonces and old verification failures, and expires
   * the events past their retention (see {@link ReceiverDatabase.sweepEvents}).
   */
  sweep(now: number): Promise<void>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/** What {@link openStorage} takes beyond the database's own options. */
export interface StorageOptions extends ReceiverDatabaseOptions {
  /** PostgreSQL: the inbox's groups in flight at once (`concurrency` of `createInbox`; default 2). */
  readonly inboxGroups?: number
}

/**
 * @example
 * const storage = await openStorage({ kind: 'sqlite', path: './data/receiver.sqlite' })
 * await storage.db.listRegistrations()
 * await storage.close()
 */
export async function openStorage(config: DatabaseConfig, options: StorageOptions = {}): Promise<Storage> {
  if (config.kind === 'sqlite') {
    const stores = openSqliteStores({ path: config.path })
    const workers: Array<Promise<{ close(): Promise<void> }>> = []
    let db: ReceiverDatabase
    try {
      db = await openReceiverDatabase({ kind: 'sqlite', database: stores.database }, options)
    } catch (error) {
      stores.close()
      throw error
    }
    const storage: Storage = {
      claims: stores.claims,
      convergence: stores.convergence,
      replay: stores.replay,
      db,
      // better-sqlite3 is synchronous: the database's statements run on the inbox's open transaction.
      createInbox(write) {
        return stores.createInbox({ write: (event) => write(event, this.db) })
      },
      createWorkerInbox({ forwarding, onReport }) {
        // Run from the sources (tests), the writer is TypeScript: the worker loads it through tsx.
        const source = import.meta.url.endsWith('.ts')
        const worker = createSqliteInboxWorker({
          path: config.path,
          writer: new URL(source ? './inbox-writer.ts' : './inbox-writer.js', import.meta.url),
          ...(source ? { execArgv: ['--import', 'tsx'] } : {}),
          writerData: {
            forwarding,
            ...(options.eventRetentionSeconds
              ? { eventRetentionSeconds: options.eventRetentionSeconds }
              : {}),
          },
          onReport: (entry) => onReport(entry as Record<string, unknown>),
        })
        workers.push(worker)
        return { accept: async (delivery) => (await worker).accept(delivery) }
      },
      async sweep(now) {
        await stores.sweep(now)
        await db.sweep(now - FAILURE_RETENTION_SECONDS)
        await db.sweepEvents(now)
      },
      async close() {
        await Promise.all(
          workers.splice(0).map(async (worker) => (await worker.catch(() => undefined))?.close()),
        )
        stores.close()
      },
    }
    return storage
  }
  const stores = await openPostgresStores({
    connectionString: config.connectionString,
    schema: config.schema,
  })
  let db: ReceiverDatabase
  try {
    db = await openReceiverDatabase({ kind: 'postgres', pool: stores.pool, schema: config.schema }, options)
  } catch (error) {
    await stores.close()
    throw error
  }
  const storage: Storage = {
    claims: stores.claims,
    convergence: stores.convergence,
    replay: stores.replay,
    db,
    // The event row is written on the connection holding the inbox's transaction.
    createInbox(write, writeGroup) {
      return stores.createInbox({
        ...(options.inboxGroups !== undefined ? { concurrency: options.inboxGroups } : {}),
        write: (event, client) => write(event, this.db, client),
        ...(writeGroup ? { writeGroup: (events, client) => writeGroup(events, this.db, client) } : {}),
      })
    },
    async sweep(now) {
      await stores.sweep(now)
      await db.sweep(now - FAILURE_RETENTION_SECONDS)
      await db.sweepEvents(now)
    },
    close: () => stores.close(),
  }
  return storage
}
