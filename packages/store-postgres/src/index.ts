export {
  openPostgresStores,
  type PostgresStoreOptions,
  type PostgresStores,
  type SweepCounts,
} from './open.js'
export type { PostgresClaimStore } from './claim-store.js'
export type { PostgresConvergenceStore } from './convergence-store.js'
export type { PostgresOutboxStore } from './outbox-store.js'
export type { PostgresReplayStore } from './replay-store.js'
export { StoreError, type StoreErrorCode } from './errors.js'
export type { IsolationLevel, RetryEvent, RetryOptions } from './database.js'
export { SCHEMA_VERSION } from './migrations.js'
export type { PostgresInboxOptions } from './inbox.js'
export { maintainOwnPartitions, migratePostgres, type PostgresTarget } from './own-tables.js'
export { ACTIVITY_PARTITIONS, OUTBOX_PARTITIONS } from './outbox-store.js'
export type { Maintenance, PartitionedTable } from './partitions.js'
export {
  CLAIM_GENERATIONS,
  REPLAY_GENERATIONS,
  TERMINAL_GENERATIONS,
  type GenerationFamily,
  type GenerationMaintenance,
} from './generations.js'
