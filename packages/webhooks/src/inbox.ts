/**
 * The transactional inbox: when the publisher writes into the same store as the dedup records (the reference
 * receiver does), everything one delivery decides and writes commits in ONE transaction: the replay nonce
 * (RFC 9421 steps 12–13), the claim, the convergence observation, the notification record, the published
 * event and the acknowledgement. No claim is ever seen in flight by another delivery, and a crash before the
 * commit leaves nothing behind: the sender's retry is simply the first delivery. Stores group the deliveries
 * that arrive together into one transaction (one fsync on SQLite, one commit on PostgreSQL), each in its own
 * savepoint. The claim → publish → complete protocol of {@link ClaimStore} stays for publishers outside the
 * store.
 */
import type { ReplayStore } from '@adwire/http-signatures'
import { WebhookError } from './errors.js'
import type { ReceivedEvent } from './receiver/types.js'
import type {
  ClaimInput,
  ClaimResult,
  ClaimStore,
  ConvergenceResult,
  ConvergenceStore,
  TaskObservation,
} from './stores.js'

/** The signature's `(keyid, nonce)`, remembered in the delivery's transaction. */
export interface InboxNonce {
  readonly keyid: string
  readonly nonce: string
  /** Unix seconds. */
  readonly expiresAt: number
  /**
   * Most live nonces per keyid (rate abuse beyond): the verifier's cap in entries, by default the rate cap
   * `ceil(maxNonceRatePerKey × 420)` = 2,100,000.
   */
  readonly cap: number
}

/** One verified delivery, everything the transaction needs to decide it. */
export interface InboxDelivery {
  /** Absent for legacy (HMAC, Bearer) deliveries, which carry no nonce. */
  readonly nonce?: InboxNonce
  readonly claim: ClaimInput
  /** 3.2 terminal convergence of the delivery's task; absent in 3.1 mode or without a task. */
  readonly observation?: TaskObservation
  /** The delivery's notification_id: a second key under it is a re-emission. */
  readonly notificationId?: string
  /** The event to publish, but for `takeover` and `reemission`, which the transaction decides. */
  readonly event: Omit<ReceivedEvent, 'takeover' | 'reemission'>
}

/**
 * How the transaction decided (what was written is committed in every case):
 * - `replayed` / `replay_capacity`: the nonce was seen, or its keyid is at its cap: nothing else is written;
 * - `claim`: the claim was not granted (completed, processing, conflict, capacity): only the nonce is written;
 * - `convergence`: the task's terminal outcome decided (`duplicate` and `stale` are acknowledged and completed;
 *   `conflict` and `in_progress` give the claim back);
 * - `published`: the event was written and the claim completed.
 */
export type InboxOutcome =
  | { readonly kind: 'replayed' }
  | { readonly kind: 'replay_capacity' }
  | { readonly kind: 'claim'; readonly claim: Exclude<ClaimResult, { kind: 'claimed' }> }
  | { readonly kind: 'convergence'; readonly result: Exclude<ConvergenceResult, 'proceed'> }
  | { readonly kind: 'published'; readonly event: ReceivedEvent }

/** A store's transactional inbox (@adwire/store-sqlite, @adwire/store-postgres, {@link createMemoryInbox}). */
export interface DeliveryInbox {
  /**
   * Decides and writes one delivery in one transaction (shared with the deliveries that arrive with it).
   * Rejects with {@link WebhookError} `webhook_publish_failed` when the event writer threw (nothing of the
   * delivery is kept), or with the store's error when the store failed (nothing is kept either).
   */
  accept(delivery: InboxDelivery): Promise<InboxOutcome>
}

/** The stores as one open transaction sees them, and the publisher's writer in it. */
export interface InboxTransaction {
  readonly claims: ClaimStore
  readonly convergence: ConvergenceStore
  readonly replay: ReplayStore
  /** Writes the published event in this transaction (the in-store publisher). */
  write(event: ReceivedEvent): void | Promise<void>
}

/**
 * The decision of one delivery, against stores bound to an open transaction (for store implementations).
 * With `compensate` (stores without rollback: memory), a writer failure gives back the claim and the
 * convergence ownership; transactional stores roll back the delivery's savepoint instead.
 *
 * @example
 * database.exec('SAVEPOINT delivery')
 * const outcome = await acceptInTransaction(transaction, delivery)
 */
export async function acceptInTransaction(
  transaction: InboxTransaction,
  delivery: InboxDelivery,
  compensate = false,
): Promise<InboxOutcome> {
  const { claim: input, observation, nonce } = delivery
  const now = input.now
  if (nonce) {
    const remembered = await transaction.replay.remember(
      nonce.keyid,
      nonce.nonce,
      nonce.expiresAt,
      nonce.cap,
      now,
    )
    if (remembered === 'replayed') return { kind: 'replayed' }
    if (remembered === 'capacity') return { kind: 'replay_capacity' }
  }
  const claim = await transaction.claims.claim(input)
  if (claim.kind !== 'claimed') return { kind: 'claim', claim }
  const ref = { namespace: input.namespace, scope: input.scope, key: input.key, fence: claim.fence }
  if (observation) {
    const observed = await transaction.convergence.observe(observation)
    if (observed === 'conflict' || observed === 'in_progress') {
      await transaction.claims.release(ref)
      return { kind: 'convergence', result: observed }
    }
    if (observed === 'duplicate' || observed === 'stale') {
      await transaction.claims.complete(ref, now)
      return { kind: 'convergence', result: observed }
    }
  }
  const reemission = delivery.notificationId
    ? await isReemission(transaction.claims, input, delivery.notificationId)
    : false
  const event: ReceivedEvent = { ...delivery.event, takeover: claim.takeover, reemission }
  try {
    await transaction.write(event)
  } catch (error) {
    if (compensate) {
      await transaction.claims.release(ref)
      if (observation?.terminal)
        await transaction.convergence.release(observation.sender, observation.taskId, input.key)
    }
    throw new WebhookError(
      'webhook_publish_failed',
      `the event could not be published: ${(error as Error)?.message ?? 'error'}`,
      { cause: error },
    )
  }
  if (observation?.terminal)
    await transaction.convergence.settle(observation.sender, observation.taskId, input.key, now)
  await transaction.claims.complete(ref, now)
  return { kind: 'published', event }
}

/** notification_id names one logical notification: the same one under another idempotency_key is a re-emission. */
async function isReemission(claims: ClaimStore, input: ClaimInput, notificationId: string): Promise<boolean> {
  const scope = `${input.scope}#notification`
  const claim = await claims.claim({
    namespace: input.namespace,
    scope,
    key: notificationId,
    fingerprint: input.key,
    now: input.now,
    leaseSeconds: 0,
    retentionSeconds: input.retentionSeconds,
  })
  if (claim.kind === 'claimed') {
    await claims.complete(
      { namespace: input.namespace, scope, key: notificationId, fence: claim.fence },
      input.now,
    )
    return false
  }
  return claim.kind === 'conflict'
}

/**
 * A {@link DeliveryInbox} over in-memory stores (examples and unit tests): the same decisions, without
 * durability; a writer failure gives the claim back.
 *
 * @example
 * const inbox = createMemoryInbox({ claims, convergence, replay, write: (event) => void events.push(event) })
 * const receiver = createWebhookReceiver({ registration, claims, convergence, replayStore: replay, inbox })
 */
export function createMemoryInbox(transaction: InboxTransaction): DeliveryInbox {
  return { accept: (delivery) => acceptInTransaction(transaction, delivery, true) }
}
