/**
 * The delivery worker: leases due outbox entries (at most `concurrency` in flight), attempts each once and
 * records it, then looks again. Several workers, in one process or many, may share an outbox: the lease
 * gives each entry to one of them at a time, and an entry whose worker died is leased again when its lease
 * ends.
 */
import type { LeasedOutboxEntry, OutboxStore } from '../stores.js'
import type { SenderLogEntry } from './types.js'

export interface WorkerContext {
  readonly outbox: OutboxStore
  readonly now: () => number
  readonly concurrency: number
  readonly leaseSeconds: number
  readonly pollIntervalMs: number
  readonly deliver: (entry: LeasedOutboxEntry) => Promise<void>
  readonly log: (entry: SenderLogEntry) => void
}

export interface Worker {
  start(): void
  stop(): Promise<void>
  drain(): Promise<void>
  /** Looks for due entries now instead of at the next poll (after an enqueue). */
  wake(): void
}

/**
 * Creates the worker. Entries of one lease are started in lease order (due time, then age), so that events
 * queued first are sent first; they then run concurrently.
 */
export function createWorker(context: WorkerContext): Worker {
  const active = new Set<Promise<void>>()
  let running = false
  let loop: Promise<void> | undefined
  let wakeUp: (() => void) | undefined

  const track = (entry: LeasedOutboxEntry) => {
    const attempt = context
      .deliver(entry)
      .catch((error: unknown) =>
        context.log({ event: 'store_error', id: entry.id, message: `attempt failed: ${String(error)}` }),
      )
      .finally(() => {
        active.delete(attempt)
        wakeUp?.()
      })
    active.add(attempt)
    return attempt
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wakeUp = undefined
        resolve()
      }
      wakeUp = done
    })

  async function lease(now: number, limit: number): Promise<LeasedOutboxEntry[] | undefined> {
    try {
      return await context.outbox.lease(now, limit, context.leaseSeconds)
    } catch (error) {
      context.log({ event: 'store_error', message: `lease failed: ${(error as Error).message}` })
      return undefined
    }
  }

  async function run(): Promise<void> {
    while (running) {
      const free = context.concurrency - active.size
      if (free <= 0) {
        await pause(context.pollIntervalMs)
        continue
      }
      const batch = await lease(context.now(), free)
      if (!running) {
        // Leased just as stop() was called: attempt them rather than leave them leased until expiry.
        for (const entry of batch ?? []) track(entry)
        break
      }
      if (!batch || batch.length === 0) {
        await pause(context.pollIntervalMs)
        continue
      }
      for (const entry of batch) track(entry)
    }
  }

  return {
    start() {
      if (running) return
      running = true
      loop = run()
    },
    async stop() {
      running = false
      wakeUp?.()
      await loop
      loop = undefined
      await Promise.all([...active])
    },
    async drain() {
      // Entries due at the start; a retry scheduled during the drain is later than that, so this ends.
      const now = context.now()
      for (;;) {
        const batch = await lease(now, context.concurrency)
        if (!batch || batch.length === 0) break
        await Promise.all(batch.map(track))
      }
      while (active.size > 0) await Promise.all([...active])
    },
    wake() {
      wakeUp?.()
    },
  }
}
