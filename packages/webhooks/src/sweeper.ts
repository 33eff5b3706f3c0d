import { every, type Every } from './every.js'

/** Anything with expired records to delete: the stores of this package, or a store bundle's `sweep`. */
export interface Sweepable {
  sweep(now: number): Promise<unknown> | unknown
}

export interface SweeperOptions {
  /** How often to sweep, seconds. Default 300. */
  readonly intervalSeconds?: number
  /** Unix seconds. Default: the system clock. */
  readonly now?: () => number
  /** Told about a failed sweep (the next one runs as planned). */
  readonly onError?: (error: unknown) => void
}

export interface Sweeper {
  /** Sweeps every target once now. */
  runOnce(): Promise<void>
  start(): void
  /** Stops the timer; resolves once a sweep under way has ended. */
  stop(): Promise<void>
}

/**
 * Deletes records past their retention (dedup claims, convergence records, replay nonces) on a timer, so the
 * stores stay bounded. The timer does not keep the process alive.
 *
 * @example
 * const sweeper = createSweeper([stores], { intervalSeconds: 300 })
 * sweeper.start()
 */
export function createSweeper(targets: readonly Sweepable[], options: SweeperOptions = {}): Sweeper {
  const now = options.now ?? (() => Date.now() / 1000)
  const interval = Math.max(1, options.intervalSeconds ?? 300) * 1000
  let timer: Every | undefined
  const runOnce = async () => {
    for (const target of targets) {
      try {
        await target.sweep(now())
      } catch (error) {
        options.onError?.(error)
      }
    }
  }
  return {
    runOnce,
    start() {
      timer ??= every(runOnce, interval)
    },
    async stop() {
      const stopping = timer?.stop()
      timer = undefined
      await stopping
    },
  }
}
