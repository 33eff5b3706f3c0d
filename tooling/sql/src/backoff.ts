/** How long a failed job waits before its next attempt. */

export interface BackoffOptions {
  /** The first delay, seconds. */
  readonly baseSeconds: number
  /** The longest delay, seconds. */
  readonly capSeconds: number
  /** In [0, 1). Default `Math.random`. */
  readonly random?: () => number
}

/**
 * Exponential back-off with ±25 % jitter: `base × 2^attempts`, capped, for a job that has failed `attempts`
 * times before this failure (0 for the first).
 *
 * @example
 * const delay = backoffSeconds(job.attempts, { baseSeconds: 1, capSeconds: 300 }) // ~1, ~2, ~4 … ~300
 * await queue.retry(job.seq, fence, { dueAt: now + delay, error: 'downstream answered 503' })
 */
export function backoffSeconds(attempts: number, options: BackoffOptions): number {
  const random = options.random ?? Math.random
  const delay = Math.min(options.capSeconds, options.baseSeconds * 2 ** Math.min(attempts, 30))
  return delay * (0.75 + random() * 0.5)
}
