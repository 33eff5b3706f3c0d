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

/**
 * Starts the loops (timers `unref`ed: they never hold the process open).
 *
 * @example
 * const loops = startLoops([{ name: 'sweep', everyMs: 60_000, run: () => storage.sweep(Date.now() / 1000) }], log)
 * await loops.stop()
 */
export function startLoops(loops: readonly Loop[], log: (entry: Record<string, unknown>) => void): Loops {
  const running = new Set<Promise<unknown>>()
  const timers = loops
    .filter((loop) => loop.everyMs > 0)
    .map((loop) => {
      let current: Promise<unknown> | undefined
      const timer = setInterval(() => {
        if (current) return
        const run: Promise<unknown> = loop
          .run()
          .catch((error: unknown) => log({ [loop.name]: 'failed', error: String(error) }))
          .finally(() => {
            current = undefined
            running.delete(run)
          })
        current = run
        running.add(run)
      }, loop.everyMs)
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
