/**
 * The one periodic-work primitive of adwire: the webhook sweeper and sender run on it, and
 * `@adwire/agent-server/host` re-exports it for agent processes and services.
 */

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
