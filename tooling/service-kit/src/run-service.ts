/**
 * The process side of a service's `server.ts`: start, print, stop gracefully on SIGTERM and SIGINT, exit codes.
 */

/** A structured log entry: one JSON object, written on one line. `level` is optional (see {@link serviceLog}). */
export type LogEntry = Record<string, unknown>

/** The levels of a service's log, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const isLevel = (value: unknown): value is LogLevel => LOG_LEVELS.includes(value as LogLevel)

/**
 * The level an entry is written at: its own `level` when it names one, `error` when it carries an `error`
 * field (a failed loop, a refused delivery), `info` otherwise.
 */
export function levelOf(entry: LogEntry): LogLevel {
  if (isLevel(entry.level)) return entry.level
  return 'error' in entry ? 'error' : 'info'
}

/**
 * The least severe level a service writes, from `LOG_LEVEL` (`debug`, `info`, `warn`, `error`; unset or empty:
 * `info`). Any other value throws a RangeError that names the accepted ones.
 *
 * @example
 * logLevelFrom(process.env.LOG_LEVEL) // 'info'
 */
export function logLevelFrom(value: string | undefined): LogLevel {
  const level = value?.trim().toLowerCase() || 'info'
  if (!isLevel(level))
    throw new RangeError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${value}")`)
  return level
}

/**
 * A service's log, in the one format of its output: every entry on one line, after the same `{name}: ` prefix
 * as the lines `print` writes, `{"at":"<ISO time>","level":"<level>",…entry}` ({@link levelOf}); entries below
 * `minimum` are not written. Never a bare JSON line among prefixed ones.
 *
 * @example
 * const log = serviceLog('registry')
 * log({ sweep: 'failed', error: 'disk full' }) // registry: {"at":"2026-…","level":"error","sweep":"failed","error":"disk full"}
 * log({ level: 'debug', polled: 3 }) // (not written at the default minimum, info)
 */
export function serviceLog(
  name: string,
  stream: Pick<NodeJS.WriteStream, 'write'> = process.stdout,
  now: () => Date = () => new Date(),
  minimum: LogLevel = 'info',
): (entry: LogEntry) => void {
  const floor = LOG_LEVELS.indexOf(minimum)
  return (entry) => {
    const level = levelOf(entry)
    if (LOG_LEVELS.indexOf(level) < floor) return
    // `at` and `level` first; the level written is the one levelOf read, whatever `entry.level` held.
    stream.write(
      `${name}: ${JSON.stringify(Object.assign({ at: now().toISOString(), level }, entry, { level }))}\n`,
    )
  }
}

/** What a service's start function hands back: something to close on a signal. */
export interface Closable {
  close(): Promise<void>
}

export interface RunServiceOptions {
  /** The service's name, the prefix of every line (`registry`, `receiver`). */
  readonly name: string
  /**
   * Starts the service and resolves once it serves. `print` writes one line to stdout, prefixed with the name;
   * `log` writes a structured entry there with the same prefix ({@link serviceLog}): hand it to the service.
   * A rejection (a bad environment, a port in use) is printed to stderr and exits the process with 1.
   */
  start(print: (line: string) => void, log: (entry: LogEntry) => void): Promise<Closable>
  /** How long the shutdown may take before the process exits with 1, ms. Default 15 000. */
  readonly shutdownTimeoutMs?: number
  /** Defaults to `process`: the tests pass their own to watch the exit code without exiting. */
  readonly process?: Pick<NodeJS.Process, 'on' | 'exit' | 'stdout' | 'stderr'>
  /** The least severe level written. Default: `LOG_LEVEL` of the environment ({@link logLevelFrom}). */
  readonly logLevel?: LogLevel
}

/**
 * Runs a service as the process's entry point. An error named `EnvError` (from `@adwire/service-env`) is
 * printed as its message alone (`registry: invalid environment: …`); any other as `cannot start: …`.
 * On the first SIGTERM or SIGINT: `{name}: SIGTERM, shutting down`, `close()`, `{name}: stopped`, exit 0
 * (exit 1 when closing fails or outlasts `shutdownTimeoutMs`).
 *
 * @example
 * runService({
 *   name: 'receiver',
 *   async start(print, log) {
 *     const receiver = await startReceiver(parseEnv(process.env), { log })
 *     print(`listening on ${describeListening(receiver.listener)}`)
 *     return receiver
 *   },
 * })
 */
export function runService(options: RunServiceOptions): Promise<void> {
  const host = options.process ?? process
  const print = (line: string) => host.stdout.write(`${options.name}: ${line}\n`)
  let minimum: LogLevel
  try {
    minimum = options.logLevel ?? logLevelFrom(process.env.LOG_LEVEL)
  } catch (error) {
    host.stderr.write(`${options.name}: invalid environment: ${(error as Error).message}\n`)
    host.exit(1)
    return Promise.resolve()
  }
  return options.start(print, serviceLog(options.name, host.stdout, undefined, minimum)).then(
    (service) => {
      let stopping = false
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) return
        stopping = true
        print(`${signal}, shutting down`)
        const force = setTimeout(() => {
          print('shutdown timed out')
          host.exit(1)
        }, options.shutdownTimeoutMs ?? 15_000)
        force.unref()
        service.close().then(
          () => {
            clearTimeout(force)
            print('stopped')
            host.exit(0)
          },
          (error: unknown) => {
            clearTimeout(force)
            print(`shutdown failed: ${String(error)}`)
            host.exit(1)
          },
        )
      }
      host.on('SIGTERM', stop)
      host.on('SIGINT', stop)
    },
    (error: unknown) => {
      const text =
        error instanceof Error && error.name === 'EnvError' ? error.message : `cannot start: ${String(error)}`
      host.stderr.write(`${options.name}: ${text}\n`)
      host.exit(1)
    },
  )
}
