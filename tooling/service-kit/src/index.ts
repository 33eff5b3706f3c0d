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
export { withJsonNewline } from './json-newline.js'
export { assertSchemaVersion, migratePostgres, migrateSqlite, type PostgresTarget } from './migrate.js'
export {
  runService,
  serviceLog,
  type Closable,
  type LogEntry,
  type RunServiceOptions,
} from './run-service.js'
export {
  answerEarly,
  jsonProblem,
  LINGER_MAX_BYTES,
  LINGER_MS,
  type Refusal,
  type RefusalCode,
} from './request-guard.js'
export { startLoops, type Loop, type Loops } from './periodic.js'
export {
  startService,
  type RunningService,
  type ServiceRuntime,
  type StartServiceOptions,
} from './start-service.js'
