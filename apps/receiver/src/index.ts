/**
 * The reference receiver as a library, for embedding and for process-level tests: start it with an
 * environment of your own, wrap its tables, read its configuration.
 */
export { startReceiver, type RunningReceiver, type StartOptions } from './service.js'
export { parseEnv, EnvError, type ReceiverEnv, type DatabaseConfig } from './env.js'
export type { ReceiverDatabase, NewEvent, RecordedEvent } from './db/types.js'
export { openStorage, type Storage } from './db/open.js'
export type { ReceiverDatabaseOptions } from './db/database.js'
