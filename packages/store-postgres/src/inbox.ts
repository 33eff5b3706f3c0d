/**
 * The transactional inbox on PostgreSQL, with group commit: the deliveries queued while the groups in flight
 * commit (or, for a lone delivery, just that one) share one transaction on one connection and so one commit;
 * up to `concurrency` groups (default 2) are in flight at once, each on its own connection.
 * The group's decisions (nonce, claim, convergence, notification, acknowledgement: `acceptInTransaction` of
 * @adwire/webhooks, server-side) are one round trip to `inbox_accept_group` (migration 3); then each
 * published event is written, then the group commits. Should one delivery fail, the group runs again with
 * each delivery in its own savepoint (`inbox_accept` and the write), so that the failure rolls back only its
 * own writes. Several processes sharing the schema stay exactly once: the functions decide under row locks,
 * and a group's claims are invisible to others until it commits. A group that fails with a serialisation
 * failure or a deadlock (SQLSTATE 40001 or 40P01: CockroachDB and YugabyteDB under contention, PostgreSQL at
 * SERIALIZABLE) is rolled back whole and run again from the start, decisions included, up to the stores'
 * `retry.attempts`; its deliveries are answered only after a commit.
 */
import type { PoolClient } from 'pg'
import {
  WebhookError,
  type DeliveryInbox,
  type InboxDelivery,
  type InboxOutcome,
  type ReceivedEvent,
} from '@adwire/webhooks'
import type { Database } from './database.js'
import { StoreError, conflictCode, toStoreError } from './errors.js'

/** How the inbox writes events, and how large a group may grow. */
export interface PostgresInboxOptions {
  /**
   * Writes the published event with statements on `client`, inside the delivery's transaction (do not commit
   * or roll back). Throwing rolls the delivery back (the receiver answers 503 `publish_failed`). It may be
   * called again for the same event when the group is run again after a serialisation failure or a deadlock
   * (the earlier attempt's writes were rolled back), so it must write on `client` only.
   */
  readonly write: (event: ReceivedEvent, client: PoolClient) => Promise<void>
  /**
   * Writes all the events a group publishes at once (one statement: one round trip, however many), inside
   * the group's transaction. Optional: without it each event is written with `write`. Throwing rolls the
   * group back; it then runs again one delivery at a time, each in its own savepoint, with `write`, so that
   * a failing event fails only its own delivery.
   */
  readonly writeGroup?: (events: readonly ReceivedEvent[], client: PoolClient) => Promise<void>
  /** Most deliveries in one transaction (default 128). */
  readonly maxGroup?: number
  /**
   * Most groups in flight at once, each a transaction on a connection of its own (default 2): a group is
   * formed from what arrived while the others commit, so the event loop and the database work at the same
   * time instead of each waiting for the other's round trips. Groups of one process meet as those of two
   * processes do: they take their row locks in one order and a later copy of a delivery waits for the
   * earlier one's commit. 1 commits one group at a time.
   */
  readonly concurrency?: number
}

interface Pending {
  readonly delivery: InboxDelivery
  readonly resolve: (outcome: InboxOutcome) => void
  readonly reject: (error: unknown) => void
}

/** A row of `inbox_accept` (and of `inbox_accept_group`, with `r_index`). */
interface DecisionRow {
  r_index?: number
  r_kind: 'replayed' | 'replay_capacity' | 'claim' | 'convergence' | 'published'
  r_claim: 'claimed' | 'takeover' | 'processing' | 'completed' | 'conflict' | 'capacity' | null
  r_lease_until: number | null
  r_result: string | null
  r_convergence: 'conflict' | 'in_progress' | 'duplicate' | 'stale' | null
  r_reemission: boolean
}

/** The number of arguments of `inbox_accept`, one array each for `inbox_accept_group`. */
const ARGUMENTS = 22
const COLUMNS = 'r_kind, r_claim, r_lease_until, r_result, r_convergence, r_reemission'

/**
 * @example
 * const inbox = stores.createInbox({ write: (event, client) => client.query(insertEvent, [event.idempotencyKey]).then(() => {}) })
 */
export function createPostgresInbox(database: Database, options: PostgresInboxOptions): DeliveryInbox {
  const maxGroup = options.maxGroup ?? 128
  const concurrency = options.concurrency ?? 2
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new StoreError(
      'store_invalid_options',
      `concurrency must be a whole number of groups ≥ 1, not ${String(concurrency)}`,
    )
  const queue: Pending[] = []
  let running = 0
  const placeholders = Array.from({ length: ARGUMENTS }, (_, index) => `$${index + 1}`).join(', ')
  const acceptOne = database.statement(
    'inbox_accept',
    `SELECT ${COLUMNS} FROM $schema.inbox_accept(${placeholders})`,
  )
  const acceptGroup = database.statement(
    'inbox_accept_group',
    `SELECT r_index, ${COLUMNS} FROM $schema.inbox_accept_group(${placeholders}) ORDER BY r_index`,
  )

  // A group is being gathered (waiting for the end of this turn of the event loop): deliveries arriving now
  // join it rather than start another.
  let gathering = false
  function schedule(): void {
    if (gathering || running >= concurrency || queue.length === 0) return
    running += 1
    gathering = true
    void flush().finally(() => {
      running -= 1
      schedule()
    })
  }

  async function flush(): Promise<void> {
    // Deliveries arriving in this turn of the event loop join the group.
    await new Promise((resolve) => setImmediate(resolve))
    gathering = false
    // Every group takes its row locks (each delivery's nonce and claim key, the task's convergence row; no
    // per-seller counter since migration 4) in one order, so that two groups of different processes sharing a
    // task or copies of a delivery wait for each other instead of deadlocking. The sort is stable: copies of
    // one delivery stay in arrival order, and inbox_accept_group decides them in this order.
    const group = queue.splice(0, maxGroup).sort(byLockOrder)
    // More than a group waiting: the next one starts now, beside this one.
    schedule()
    let settled: Array<() => void>
    try {
      // The whole group is one transaction: after a serialisation failure or a deadlock (anywhere, the
      // commit included) it is run again from the start, every decision taken anew; nothing is settled
      // before a commit succeeded.
      settled = await database.retrying('inbox', () => runGroup(group))
    } catch (error) {
      const failure = toStoreError(error, 'inbox')
      for (const pending of group) pending.reject(failure)
      return
    }
    for (const settle of settled) settle()
  }

  /** One run of `group` on a connection of its own: how to settle each delivery once it committed. */
  async function runGroup(group: readonly Pending[]): Promise<Array<() => void>> {
    const client = await database.connect('inbox')
    const bound = database.on(client)
    let broken: unknown
    try {
      // Optimistically without savepoints (the group's decisions in one round trip); should one delivery
      // fail, the group is rolled back and run again with a savepoint around each.
      return (await attempt(client, bound, group, false)) ?? (await attempt(client, bound, group, true))!
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError
      })
      throw error
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it rather than pool it.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /**
   * Runs the group in one transaction and commits it; resolves with how to settle each delivery, or (without
   * savepoints) with undefined after rolling back when one delivery failed. A serialisation failure or a
   * deadlock is no delivery's own: it rejects, for the whole group to be run again.
   */
  async function attempt(
    client: PoolClient,
    bound: Database,
    group: readonly Pending[],
    savepoints: boolean,
  ): Promise<Array<() => void> | undefined> {
    const settled: Array<() => void> = []
    await client.query(database.begin)
    if (!savepoints) {
      try {
        const decisions = await decide(bound, group)
        if (options.writeGroup) {
          // Decided first, then every published event in one statement: the group holds its sellers'
          // counter rows for four round trips (BEGIN, decide, write, COMMIT) whatever its size.
          const outcomes = group.map((pending, index) => toOutcome(pending.delivery, decisions[index]))
          const events = outcomes.flatMap((outcome) => (outcome.kind === 'published' ? [outcome.event] : []))
          if (events.length > 0) await options.writeGroup(events, client)
          for (const [index, pending] of group.entries())
            settled.push(() => pending.resolve(outcomes[index]!))
        } else {
          for (const [index, pending] of group.entries()) {
            const outcome = await publish(client, pending.delivery, decisions[index])
            settled.push(() => pending.resolve(outcome))
          }
        }
      } catch (error) {
        if (conflictCode(error)) throw error
        await client.query('ROLLBACK')
        return undefined
      }
    } else {
      for (const pending of group) {
        await client.query('SAVEPOINT adwire_inbox_delivery')
        try {
          const decisions = await decide(bound, [pending])
          const outcome = await publish(client, pending.delivery, decisions[0])
          await client.query('RELEASE SAVEPOINT adwire_inbox_delivery')
          settled.push(() => pending.resolve(outcome))
        } catch (error) {
          // The transaction as a whole lost a conflict: a savepoint cannot save it.
          if (conflictCode(error)) throw error
          await client.query('ROLLBACK TO SAVEPOINT adwire_inbox_delivery')
          // A writer failure stays what it is (the receiver answers publish_failed); the rest is the store's.
          const failure = WebhookError.is(error) ? error : toStoreError(error, 'inbox')
          settled.push(() => pending.reject(failure))
        }
      }
    }
    await client.query('COMMIT')
    return settled
  }

  /** The decisions of `group`, in its order: one round trip (and one row per delivery). */
  async function decide(bound: Database, group: readonly Pending[]): Promise<DecisionRow[]> {
    const rows = group.map((pending) => decisionArguments(pending.delivery))
    if (rows.length === 1) {
      const { rows: decided } = await bound.run<DecisionRow>(acceptOne, rows[0]!)
      if (decided.length !== 1) throw unexpected(decided)
      return decided
    }
    const columns = Array.from({ length: ARGUMENTS }, (_, column) => rows.map((row) => row[column]))
    const { rows: decided } = await bound.run<DecisionRow>(acceptGroup, columns)
    if (decided.length !== group.length || decided.some((row, index) => row.r_index !== index + 1))
      throw unexpected(decided)
    return decided
  }

  /** The outcome of one decision; for `published`, after writing the event on `client`. */
  async function publish(
    client: PoolClient,
    delivery: InboxDelivery,
    row: DecisionRow | undefined,
  ): Promise<InboxOutcome> {
    const outcome = toOutcome(delivery, row)
    if (outcome.kind !== 'published') return outcome
    try {
      await options.write(outcome.event, client)
    } catch (error) {
      throw new WebhookError(
        'webhook_publish_failed',
        `the event could not be published: ${(error as Error)?.message ?? 'error'}`,
        { cause: error },
      )
    }
    return outcome
  }

  return {
    accept(delivery) {
      // The stores' argument checks, before the delivery joins a group.
      const invalid = invalidArguments(delivery)
      if (invalid) return Promise.reject(invalid)
      return new Promise<InboxOutcome>((resolve, reject) => {
        queue.push({ delivery, resolve, reject })
        schedule()
      })
    },
  }
}

/** The arguments of `inbox_accept` for `delivery` (null where a part is absent). */
function decisionArguments(delivery: InboxDelivery): unknown[] {
  const { nonce, claim, observation } = delivery
  return [
    nonce ? nonce.keyid : null,
    nonce?.nonce ?? null,
    nonce?.expiresAt ?? null,
    nonce?.cap ?? null,
    claim.namespace,
    claim.scope,
    claim.key,
    claim.fingerprint,
    crypto.randomUUID(),
    claim.now,
    claim.leaseSeconds,
    claim.retentionSeconds,
    claim.maxPerScope ?? null,
    observation?.sender ?? null,
    observation ? observation.taskId : null,
    observation?.terminal ?? null,
    observation?.comparison ?? null,
    observation?.deliveryKey ?? null,
    observation?.now ?? null,
    observation?.leaseSeconds ?? null,
    observation?.retentionSeconds ?? null,
    // As acceptInTransaction: an empty notification_id names no notification.
    delivery.notificationId ? delivery.notificationId : null,
  ]
}

/** What `PostgresReplayStore.remember` and `PostgresClaimStore.claim` refuse before any statement. */
function invalidArguments(delivery: InboxDelivery): StoreError | undefined {
  const cap = delivery.nonce?.cap
  if (delivery.nonce && !(Number.isSafeInteger(cap) && cap! >= 0))
    return new StoreError('store_invalid_options', `cap must be a non-negative integer, not ${cap}`)
  const maxPerScope = delivery.claim.maxPerScope
  if (maxPerScope !== undefined && !(Number.isSafeInteger(maxPerScope) && maxPerScope >= 0))
    return new StoreError(
      'store_invalid_options',
      `maxPerScope must be a non-negative integer, not ${maxPerScope}`,
    )
  return undefined
}

/** The {@link InboxOutcome} a decision row stands for. */
function toOutcome(delivery: InboxDelivery, row: DecisionRow | undefined): InboxOutcome {
  switch (row?.r_kind) {
    case 'replayed':
      return { kind: 'replayed' }
    case 'replay_capacity':
      return { kind: 'replay_capacity' }
    case 'claim':
      switch (row.r_claim) {
        case 'processing':
          return {
            kind: 'claim',
            claim: { kind: 'processing', leaseExpiresAt: row.r_lease_until ?? delivery.claim.now },
          }
        case 'completed':
          return { kind: 'claim', claim: { kind: 'completed', result: row.r_result } }
        case 'conflict':
          return { kind: 'claim', claim: { kind: 'conflict' } }
        case 'capacity':
          return { kind: 'claim', claim: { kind: 'capacity' } }
      }
      break
    case 'convergence':
      if (row.r_convergence !== null) return { kind: 'convergence', result: row.r_convergence }
      break
    case 'published': {
      const event: ReceivedEvent = {
        ...delivery.event,
        takeover: row.r_claim === 'takeover',
        reemission: row.r_reemission,
      }
      return { kind: 'published', event }
    }
  }
  throw unexpected(row)
}

const unexpected = (row: unknown) =>
  new StoreError('store_query_failed', `inbox_accept returned an unexpected row: ${JSON.stringify(row)}`)

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
