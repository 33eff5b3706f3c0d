/**
 * An agent process's periodic work (sweeps, clock ticks, due-work polls): each loop runs every so often, never
 * overlapping itself (a slow run is not joined by the next), its failures logged; stopping clears the timers
 * and waits for the runs in flight, so the database is closed after them. `@adwire/seller` runs its loops with
 * it, and `@adwire/service-kit`'s `startService` every service's.
 */

import { every } from '@adwire/webhooks'

export { every, type Every } from '@adwire/webhooks'

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
