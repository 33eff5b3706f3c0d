/**
 * An agent process's periodic work (sweeps, clock ticks, due-work polls): each loop runs every so often, never
 * overlapping itself (a slow run is not joined by the next), its failures logged; stopping clears the timers
 * and waits for the runs in flight, so the database is closed after them. `@adwire/seller` runs its loops with
 * it, and `@adwire/service-kit`'s `startService` every service's.
 */

/** One periodic job. */
export interface Loop {
  /** Names the job in its failure log line: `{ [name]: 'failed', error }`. */
  readonly name: string
  /** Milliseconds between runs; 0 or less: never runs. */
  readonly everyMs: number
  readonly run: () => Promise<unknown>
}

/** Running loops. */
export interface Loops {
  /** Clears the timers and resolves once the runs in flight have ended. Idempotent. */
  stop(): Promise<void>
}

/** A task run every so often by {@link every}. */
export interface Every {
  /** Clears the timer and resolves once the run in flight (if any) has ended. Idempotent. */
  stop(): Promise<void>
}

/**
 * Runs `task` every `ms` milliseconds, never overlapping itself: a tick that finds the previous run still going
 * is skipped, not queued. A run's rejection goes to `onError` (default: ignored) and the next tick runs as
 * usual. The timer is `unref`ed (it never holds the process open); `stop()` clears it and waits for the run in
 * flight, so what the task uses can be closed right after. `ms` of 0 or less: never runs.
 *
 * @example
 * const sweeping = every(() => storage.sweep(Date.now() / 1000), 60_000, (error) => log({ sweep: 'failed', error: String(error) }))
 * await sweeping.stop()
 */
export function every(task: () => Promise<unknown>, ms: number, onError?: (error: unknown) => void): Every {
  if (!(ms > 0)) return { stop: () => Promise.resolve() }
  let current: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (current) return
    current = Promise.resolve()
      .then(task)
      .catch((error: unknown) => onError?.(error))
      .finally(() => (current = undefined))
  }, ms)
  timer.unref()
  let stopping: Promise<void> | undefined
  return {
    stop() {
      stopping ??= (async () => {
        clearInterval(timer)
        await current
      })()
      return stopping
    },
  }
}

/**
 * Starts the loops (each with {@link every}).
 *
 * @example
 * const loops = startLoops([{ name: 'sweep', everyMs: 60_000, run: () => storage.sweep(Date.now() / 1000) }], log)
 * await loops.stop()
 */
export function startLoops(loops: readonly Loop[], log: (entry: Record<string, unknown>) => void): Loops {
  const running = loops.map((loop) =>
    every(loop.run, loop.everyMs, (error) => log({ [loop.name]: 'failed', error: String(error) })),
  )
  let stopping: Promise<void> | undefined
  return {
    stop() {
      stopping ??= Promise.allSettled(running.map((one) => one.stop())).then(() => undefined)
      return stopping
    },
  }
}
