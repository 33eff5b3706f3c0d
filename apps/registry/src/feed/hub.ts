/**
 * Wakes the open SSE streams of this process when events are written here, so they do not wait for their
 * poll interval; streams still poll (events written by another instance on the same PostgreSQL schema).
 */
export interface FeedHub {
  /** Called after events were committed. */
  notify(): void
  /** Resolves at the next notify, or after `ms`, or when the hub closes; `cancel()` drops the wait. */
  wait(ms: number): { promise: Promise<void>; cancel(): void }
  /** Ends every wait; later waits resolve at once. */
  close(): void
  readonly closed: boolean
}

/** Creates a hub. */
export function createFeedHub(): FeedHub {
  const waiters = new Set<() => void>()
  let closed = false
  return {
    get closed() {
      return closed
    },
    notify() {
      for (const wake of [...waiters]) wake()
    },
    wait(ms) {
      let wake: () => void = () => {}
      const promise = new Promise<void>((resolve) => {
        if (closed) return resolve()
        const timer = setTimeout(() => wake(), ms)
        wake = () => {
          clearTimeout(timer)
          waiters.delete(wake)
          resolve()
        }
        waiters.add(wake)
      })
      return { promise, cancel: () => wake() }
    },
    close() {
      closed = true
      for (const wake of [...waiters]) wake()
    },
  }
}
