export { placeholders, type SqlDialect, type SqlDriver, type SqlExecutor, type SqlValue } from './driver.js'
export { sqliteDriver } from './sqlite.js'
export { postgresDriver, postgresExecutor } from './postgres.js'
export {
  leaseQueue,
  type Assignments,
  type Fence,
  type Leased,
  type LeaseQueue,
  type LeaseQueueOperations,
  type LeaseQueueSpec,
  type SqlFragment,
} from './lease-queue.js'
export { backoffSeconds, type BackoffOptions } from './backoff.js'
export { SqlError, type SqlErrorCode } from './errors.js'
