/**
 * Expiry at a steady rate, on the simulated clock of the stores: the sender's outbox and webhook_activity fed
 * `rate` entries a simulated hour for 48 hours (each enqueued, leased and recorded delivered, its deadline
 * `horizon` after its creation), swept every simulated hour, with the bytes they take at hour 24 and hour 48.
 * PostgreSQL expires them by dropping time partitions (migration 5), SQLite by DELETE sweeps. Then the cost
 * of expiring a given number of rows: one partition dropped against the same rows deleted.
 */
import type { OutboxStore } from '@adwire/webhooks'

export interface Simulated {
  /** Bytes at the end of hour 24 and hour 48. */
  readonly bytes: { readonly at24: number; readonly at48: number }
  /** Entries written. */
  readonly entries: number
  /** Milliseconds of all the hourly sweeps together, and the slowest one. */
  readonly sweepMs: number
  readonly slowestSweepMs: number
}

export const HOUR = 3_600

/**
 * Runs the 48 simulated hours from `start` on `outbox`; `sweep(now)` is the store's sweep, `bytes()` what the
 * tables take now.
 */
export async function simulate(
  outbox: OutboxStore,
  sweep: (now: number) => Promise<unknown>,
  bytes: () => Promise<number>,
  options: { readonly start: number; readonly rate: number; readonly horizon: number; readonly tag: string },
): Promise<Simulated> {
  const { start, rate, horizon, tag } = options
  let at24 = 0
  let sweepMs = 0
  let slowestSweepMs = 0
  let entries = 0
  for (let hour = 0; hour < 48; hour += 1) {
    const BATCH = 50
    for (let first = 0; first < rate; first += BATCH) {
      const now = start + hour * HOUR + (first / rate) * HOUR
      const ids: string[] = []
      for (let index = first; index < Math.min(rate, first + BATCH); index += 1) {
        const id = `${tag}-${hour}-${index}`
        ids.push(id)
        await outbox.enqueue({
          id,
          destination: `buyer-${index % 8}`,
          url: 'https://buyer.example/webhooks/1',
          idempotencyKey: `whk_${id}_0000000000000000`,
          body: JSON.stringify({ status: 'working', task_id: `task_${id}`, percentage: index % 100 }),
          headers: { 'content-type': 'application/json' },
          coalesceKey: null,
          createdAt: now,
          nextAttemptAt: now,
          deadlineAt: now + horizon,
        })
      }
      entries += ids.length
      for (const entry of await outbox.lease(now, BATCH, 30))
        await outbox.record(entry.id, entry.fence, { kind: 'delivered', httpStatus: 200 }, now + 0.1)
    }
    const began = performance.now()
    await sweep(start + (hour + 1) * HOUR)
    const took = performance.now() - began
    sweepMs += took
    slowestSweepMs = Math.max(slowestSweepMs, took)
    if (hour === 23) at24 = await bytes()
  }
  return { bytes: { at24, at48: await bytes() }, entries, sweepMs, slowestSweepMs }
}
