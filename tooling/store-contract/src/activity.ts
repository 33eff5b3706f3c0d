/**
 * The fixture of the outbox retention tests of the stores: two entries of one destination attempted once at
 * `t0 + 1`, one delivered (finished) and one to retry (pending), so that each leaves a webhook_activity row.
 */
import type { OutboxStore } from '@adwire/webhooks'
import { expect } from 'vitest'
import { outboxEntry } from './entries.js'

/** The destination the fixture's entries belong to. */
export const ACTIVITY_DESTINATION = 'registration-1'

const entry = (id: string, t0: number) =>
  outboxEntry(ACTIVITY_DESTINATION, {
    id,
    idempotencyKey: `${id}-idempotency-key-000000`,
    createdAt: t0,
    nextAttemptAt: t0,
    deadlineAt: t0 + 86_400,
  })

/**
 * Enqueues `delivered` and `pending` (deadline `t0` + one day), leases both at `t0` and records an attempt of
 * each at `t0 + 1`: delivered 200, and a 503 to retry at `t0 + 90,000`.
 *
 * @example
 * await seedActivity(stores.outbox, 1_000)
 * expect(await stores.outbox.activity(ACTIVITY_DESTINATION)).toHaveLength(2)
 */
export async function seedActivity(outbox: OutboxStore, t0: number): Promise<void> {
  await outbox.enqueue(entry('delivered', t0))
  await outbox.enqueue(entry('pending', t0))
  const leased = await outbox.lease(t0, 10, 30)
  expect(leased.map((item) => item.id).sort()).toEqual(['delivered', 'pending'])
  for (const item of leased) {
    const outcome =
      item.id === 'delivered'
        ? ({ kind: 'delivered', httpStatus: 200 } as const)
        : ({ kind: 'retry', nextAttemptAt: t0 + 90_000, httpStatus: 503, activityStatus: 'failed' } as const)
    expect(await outbox.record(item.id, item.fence, outcome, t0 + 1)).toBe(true)
  }
  expect(await outbox.activity(ACTIVITY_DESTINATION)).toHaveLength(2)
}
