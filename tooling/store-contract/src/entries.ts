/**
 * The outbox entry the store suites enqueue: a pending `working` push to a buyer's URL, due at `createdAt`, with
 * ids no other test uses.
 */
import { randomUUID } from 'node:crypto'
import type { NewOutboxEntry } from '@adwire/webhooks'

/**
 * A new outbox entry for `destination` (created and due at 1 000, deadline one day later); `overrides` replace
 * fields.
 *
 * @example
 * await stores.outbox.enqueue(outboxEntry('registration-1', { nextAttemptAt: 5_000 }))
 */
export function outboxEntry(destination: string, overrides: Partial<NewOutboxEntry> = {}): NewOutboxEntry {
  return {
    id: `entry_${randomUUID()}`,
    destination,
    url: 'https://buyer.example/webhooks/1',
    idempotencyKey: `idem_${randomUUID()}`,
    body: '{"status":"working"}',
    headers: { 'content-type': 'application/json' },
    coalesceKey: null,
    createdAt: 1_000,
    nextAttemptAt: 1_000,
    deadlineAt: 87_400,
    ...overrides,
  }
}
