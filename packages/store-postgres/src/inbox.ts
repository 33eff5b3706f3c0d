/**
 * The transactional inbox on PostgreSQL, with group commit: the deliveries queued while the previous group
 * commits (or, for a lone delivery, just that one) share one transaction on one connection and so one commit.
 * Should one delivery fail, the group runs again with each delivery in its own savepoint, so that the failure
 * rolls back only its own writes. Several processes
 * sharing the schema stay exactly once: the claim and nonce functions decide under row locks, and a group's
 * claims are invisible to others until it commits.
 */
import type { PoolClient } from 'pg'
import {
  acceptInTransaction,
  WebhookError,
  type DeliveryInbox,
  type InboxDelivery,
  type InboxOutcome,
  type InboxTransaction,
  type ReceivedEvent,
} from '@adwire/webhooks'
import { PostgresClaimStore } from './claim-store.js'
import { PostgresConvergenceStore } from './convergence-store.js'
import type { Database } from './database.js'
import { toStoreError } from './errors.js'
import { PostgresReplayStore } from './replay-store.js'

/** How the inbox writes events, and how large a group may grow. */
export interface PostgresInboxOptions {
  /**
   * Writes the published event with statements on `client`, inside the delivery's transaction (do not commit
   * or roll back). Throwing rolls the delivery back (the receiver answers 503 `publish_failed`).
   */
  readonly write: (event: ReceivedEvent, client: PoolClient) => Promise<void>
  /** Most deliveries in one transaction (default 128). */
  readonly maxGroup?: number
}

interface Pending {
  readonly delivery: InboxDelivery
  readonly resolve: (outcome: InboxOutcome) => void
  readonly reject: (error: unknown) => void
}

/**
 * @example
 * const inbox = stores.createInbox({ write: (event, client) => client.query(insertEvent, [event.idempotencyKey]).then(() => {}) })
 */
export function createPostgresInbox(database: Database, options: PostgresInboxOptions): DeliveryInbox {
  const maxGroup = options.maxGroup ?? 128
  const queue: Pending[] = []
  let running = false

  function schedule(): void {
    if (running || queue.length === 0) return
    running = true
    void flush().finally(() => {
      running = false
      schedule()
    })
  }

  async function flush(): Promise<void> {
    // Deliveries arriving in this turn of the event loop join the group.
    await new Promise((resolve) => setImmediate(resolve))
    // Every group takes the row locks of its sellers (the per-keyid replay counter, the per-scope claim
    // counter, the task's convergence row) in one order, so that two groups of different processes sharing
    // sellers wait for each other instead of deadlocking. The sort is stable: copies of one delivery stay in
    // arrival order.
    const group = queue.splice(0, maxGroup).sort(byLockOrder)
    let client: PoolClient
    try {
      client = await database.connect('inbox')
    } catch (error) {
      for (const pending of group) pending.reject(error)
      return
    }
    const bound = database.on(client)
    const transaction: InboxTransaction = {
      claims: new PostgresClaimStore(bound),
      convergence: new PostgresConvergenceStore(bound),
      replay: new PostgresReplayStore(bound),
      write: (event: ReceivedEvent) => options.write(event, client),
    }
    let broken: unknown
    try {
      // Optimistically without savepoints (two round trips fewer a delivery); should one delivery fail, the
      // group is rolled back and run again with a savepoint around each.
      const settled =
        (await attempt(client, transaction, group, false)) ??
        (await attempt(client, transaction, group, true))
      for (const settle of settled!) settle()
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError
      })
      const failure = toStoreError(error, 'inbox')
      for (const pending of group) pending.reject(failure)
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it rather than pool it.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /**
   * Runs the group in one transaction and commits it; resolves with how to settle each delivery, or (without
   * savepoints) with undefined after rolling back when one delivery failed.
   */
  async function attempt(
    client: PoolClient,
    transaction: InboxTransaction,
    group: readonly Pending[],
    savepoints: boolean,
  ): Promise<Array<() => void> | undefined> {
    const settled: Array<() => void> = []
    await client.query('BEGIN')
    for (const pending of group) {
      if (savepoints) await client.query('SAVEPOINT adwire_inbox_delivery')
      try {
        const outcome = await acceptInTransaction(transaction, pending.delivery)
        if (savepoints) await client.query('RELEASE SAVEPOINT adwire_inbox_delivery')
        settled.push(() => pending.resolve(outcome))
      } catch (error) {
        if (!savepoints) {
          await client.query('ROLLBACK')
          return undefined
        }
        await client.query('ROLLBACK TO SAVEPOINT adwire_inbox_delivery')
        // A writer failure stays what it is (the receiver answers publish_failed); the rest is the store's.
        const failure = WebhookError.is(error) ? error : toStoreError(error, 'inbox')
        settled.push(() => pending.reject(failure))
      }
    }
    await client.query('COMMIT')
    return settled
  }

  return {
    accept(delivery) {
      return new Promise<InboxOutcome>((resolve, reject) => {
        queue.push({ delivery, resolve, reject })
        schedule()
      })
    },
  }
}

/** The lock order of a group: replay keyid, then claim scope, then the convergence task. */
function byLockOrder(a: Pending, b: Pending): number {
  return (
    compare(a.delivery.nonce?.keyid, b.delivery.nonce?.keyid) ||
    compare(a.delivery.claim.scope, b.delivery.claim.scope) ||
    compare(a.delivery.observation?.taskId, b.delivery.observation?.taskId)
  )
}

const compare = (a: string | undefined, b: string | undefined): number =>
  a === b ? 0 : a === undefined ? -1 : b === undefined ? 1 : a < b ? -1 : 1
