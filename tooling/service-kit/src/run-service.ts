/**
 * The process side of a service's `server.ts`: start, print, stop gracefully on SIGTERM and SIGINT, exit codes.
 */

/** A structured log entry: one JSON object, written on one line. */
export type LogEntry = Record<string, unknown>

/**
 * A service's log, in the one format of its output: every entry on one line, after the same `{name}: ` prefix
 * as the lines `print` writes, `{"at":"<ISO time>",…entry}`. Never a bare JSON line among prefixed ones.
 *
 * @example
 * const log = serviceLog('registry')
 * log({ sweep: 'failed', error: 'disk full' }) // registry: {"at":"2026-…","sweep":"failed","error":"disk full"}
 */
export function serviceLog(
  name: string,
  stream: Pick<NodeJS.WriteStream, 'write'> = process.stdout,
  now: () => Date = () => new Date(),
): (entry: LogEntry) => void {
  return (entry) => void stream.write(`${name}: ${JSON.stringify({ at: now().toISOString(), ...entry })}\n`)
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
  return options.start(print, serviceLog(options.name, host.stdout)).then(
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
