export { openSqliteStores, type SqliteStoreOptions, type SqliteStores, type SweepCounts } from './open.js'
export { StoreError, type StoreErrorCode } from './errors.js'
export { SCHEMA_VERSION } from './migrations.js'
export { enableWal } from './wal.js'
export type { SqliteInboxOptions } from './inbox.js'
export { migrateSqlite } from './own-tables.js'
export {
  createSqliteInboxWorker,
  type CreateInboxWriter,
  type InboxWriterContext,
  type SqliteInboxWorkerOptions,
  type WorkerEvent,
} from './inbox-worker.js'
