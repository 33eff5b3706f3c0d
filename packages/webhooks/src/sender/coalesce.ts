/**
 * Coalescence of state-shaped events (AdCP webhooks.mdx "Coalescence"): near-simultaneous changes of one
 * resource in one destination become one push. A newer event replaces a pending older one (the outbox
 * supersedes it atomically); the push waits `windowSeconds` after the latest change, but never longer than
 * `maxDelaySeconds` after the oldest change it carries. Scheduled and final delivery reports are exempt.
 */
import type { CoalesceClass } from './types.js'

const MEDIA_BUY_PREFIX = 'media_buy:'

/**
 * The outbox coalesce key of a resource; scoped to its media buy when there is one, so that the buy's final
 * report can find the impairments still queued for it.
 *
 * @example
 * coalesceKeyOf('mb_1', 'creative:cr_9') // 'media_buy:["mb_1","creative:cr_9"]'
 */
export function coalesceKeyOf(mediaBuyId: string | undefined, key: string): string {
  return mediaBuyId === undefined ? key : `${MEDIA_BUY_PREFIX}${JSON.stringify([mediaBuyId, key])}`
}

/** The media buy a coalesce key is scoped to, if any. */
export function mediaBuyOfCoalesceKey(coalesceKey: string): string | undefined {
  if (!coalesceKey.startsWith(MEDIA_BUY_PREFIX)) return undefined
  try {
    const parsed: unknown = JSON.parse(coalesceKey.slice(MEDIA_BUY_PREFIX.length))
    return Array.isArray(parsed) && typeof parsed[0] === 'string' ? parsed[0] : undefined
  } catch {
    return undefined
  }
}

/**
 * When a coalesced push fires: `windowSeconds` after this change, capped at `maxDelaySeconds` after the
 * oldest change still pending (`groupStart`), and never before now.
 *
 * @example
 * coalescedAttemptAt({ windowSeconds: 60, maxDelaySeconds: 300 }, 1_290, 1_000) // 1_300 (the cap)
 */
export function coalescedAttemptAt(policy: CoalesceClass, now: number, groupStart: number): number {
  return Math.max(now, Math.min(now + policy.windowSeconds, groupStart + policy.maxDelaySeconds))
}

/** Runs tasks one at a time per key (in this process), in call order. */
export class KeyedSerializer {
  readonly #tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const result = previous.then(task, task)
    const tail = result.then(
      () => undefined,
      () => undefined,
    )
    this.#tails.set(key, tail)
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    })
    return result
  }
}
