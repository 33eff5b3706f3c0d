/**
 * Opens everything the receiver keeps: the @adwire/store-* stores (dedup claims, convergence, replay nonces)
 * and the receiver's own tables, on one SQLite file or one PostgreSQL schema.
 */
import type { ReplayStore } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import type { ClaimStore, ConvergenceStore } from '@adwire/webhooks'
import type { DatabaseConfig } from '../env.js'
import { postgresReceiverDatabase } from './postgres.js'
import { sqliteReceiverDatabase } from './sqlite.js'
import type { ReceiverDatabase } from './types.js'

/** How long verification failures are kept for the page, seconds. */
export const FAILURE_RETENTION_SECONDS = 7 * 86_400

export interface Storage {
  readonly claims: ClaimStore
  readonly convergence: ConvergenceStore
  readonly replay: ReplayStore
  readonly db: ReceiverDatabase
  /** Deletes expired dedup records, convergence records, nonces and old verification failures. */
  sweep(now: number): Promise<void>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/**
 * @example
 * const storage = await openStorage({ kind: 'sqlite', path: './data/receiver.sqlite' })
 * await storage.db.listRegistrations()
 * await storage.close()
 */
export async function openStorage(config: DatabaseConfig): Promise<Storage> {
  if (config.kind === 'sqlite') {
    const stores = openSqliteStores({ path: config.path })
    let db: ReceiverDatabase
    try {
      db = sqliteReceiverDatabase(stores.database)
    } catch (error) {
      stores.close()
      throw error
    }
    return {
      claims: stores.claims,
      convergence: stores.convergence,
      replay: stores.replay,
      db,
      async sweep(now) {
        await stores.sweep(now)
        await db.sweep(now - FAILURE_RETENTION_SECONDS)
      },
      async close() {
        stores.close()
      },
    }
  }
  const stores = await openPostgresStores({
    connectionString: config.connectionString,
    schema: config.schema,
  })
  let db: ReceiverDatabase
  try {
    db = await postgresReceiverDatabase(stores.pool, config.schema)
  } catch (error) {
    await stores.close()
    throw error
  }
  return {
    claims: stores.claims,
    convergence: stores.convergence,
    replay: stores.replay,
    db,
    async sweep(now) {
      await stores.sweep(now)
      await db.sweep(now - FAILURE_RETENTION_SECONDS)
    },
    close: () => stores.close(),
  }
}
