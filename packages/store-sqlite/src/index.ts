export { openSqliteStores, type SqliteStoreOptions, type SqliteStores, type SweepCounts } from './open.js'
export { StoreError, type StoreErrorCode } from './errors.js'
export { SCHEMA_VERSION } from './migrations.js'
export { enableWal } from './wal.js'
