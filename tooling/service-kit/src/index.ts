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
export { assertSchemaVersion } from './migrate.js'
export { migrateSqlite } from '@adwire/store-sqlite'
export { migratePostgres, type PostgresTarget } from '@adwire/store-postgres'
export {
  LOG_LEVELS,
  levelOf,
  logLevelFrom,
  runService,
  serviceLog,
  type Closable,
  type LogEntry,
  type LogLevel,
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
export { every, startLoops, type Every, type Loop, type Loops } from '@adwire/agent-server/host'
export {
  startService,
  type RunningService,
  type ServiceRuntime,
  type StartServiceOptions,
} from './start-service.js'
