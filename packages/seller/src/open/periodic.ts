/**
 * A seller's periodic work as timers: each job runs every so often, never overlapping itself (a slow run is not
 * joined by the next), its failures logged; stopping clears the timers and waits for the runs in flight, so the
 * database is closed after them. Timers are `unref`ed: they never hold the process open.
 */

/** One periodic job. */
export interface PeriodicJob {
  /** Names the job in its failure log line: `{ [name]: 'failed', error }`. */
  readonly name: string
  /** Milliseconds between runs; 0 or less: never runs. */
  readonly everyMs: number
  readonly run: () => Promise<unknown>
}

/** Running jobs. */
export interface Periodic {
  /** Clears the timers and resolves once the runs in flight have ended. Idempotent. */
  stop(): Promise<void>
}

/**
 * @example
 * const periodic = runPeriodic([{ name: 'tick', everyMs: 30_000, run: () => tickBuys(seller) }], console.log)
 * await periodic.stop()
 */
export function runPeriodic(
  jobs: readonly PeriodicJob[],
  log: (entry: Record<string, unknown>) => void,
): Periodic {
  const running = new Set<Promise<unknown>>()
  const timers = jobs
    .filter((job) => job.everyMs > 0)
    .map((job) => {
      let current: Promise<unknown> | undefined
      const timer = setInterval(() => {
        if (current) return
        const run: Promise<unknown> = job
          .run()
          .catch((error: unknown) => log({ [job.name]: 'failed', error: String(error) }))
          .finally(() => {
            current = undefined
            running.delete(run)
          })
        current = run
        running.add(run)
      }, job.everyMs)
      timer.unref()
      return timer
    })
  let stopping: Promise<void> | undefined
  return {
    stop() {
      stopping ??= (async () => {
        for (const timer of timers) clearInterval(timer)
        await Promise.allSettled([...running])
      })()
      return stopping
    },
  }
}
