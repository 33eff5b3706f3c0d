export {
  DEFAULT_HOST,
  DEFAULT_HTTP_LIMITS,
  describeListening,
  listen,
  type FetchHandler,
  type HttpLimits,
  type ListenOptions,
  type Listener,
} from './listen.js'
export { assertSchemaVersion, migratePostgres, migrateSqlite, type PostgresTarget } from './migrate.js'
export { runService, type Closable, type RunServiceOptions } from './run-service.js'
export {
  answerEarly,
  jsonProblem,
  LINGER_MAX_BYTES,
  LINGER_MS,
  type Refusal,
  type RefusalCode,
} from './request-guard.js'
