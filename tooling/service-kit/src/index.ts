export {
  DEFAULT_HOST,
  describeListening,
  listen,
  type FetchHandler,
  type ListenOptions,
  type Listener,
} from './listen.js'
export { assertSchemaVersion, migratePostgres, migrateSqlite, type PostgresTarget } from './migrate.js'
export { runService, type Closable, type RunServiceOptions } from './run-service.js'
