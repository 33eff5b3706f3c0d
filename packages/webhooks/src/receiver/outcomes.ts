/**
 * The answers the receiver core gives for store verdicts, shared by the claim → publish → complete path and
 * the transactional inbox path, so that both answer a delivery the same way.
 */
import { WebhookError } from '../errors.js'
import type { DeliveryInbox, InboxDelivery } from '../inbox.js'
import type { ClaimResult, ConvergenceResult } from '../stores.js'
import { nonceRejection } from './authenticate.js'
import { json, Rejection, retryAfter } from './respond.js'
import type { ReceiverAnswer, ReceiverLogEntry } from './types.js'

/** Who a delivery is, for its log line. */
export interface DeliveryBase {
  readonly registrationId: string
  readonly sender: string
  readonly idempotencyKey: string
}

export interface AnswerContext {
  readonly protocol: '3.2' | '3.1'
  readonly log: (entry: ReceiverLogEntry) => void
  readonly now: number
  readonly leaseSeconds: number
}

/** The answer to a claim that was not granted: a duplicate (200), or 503, 429, 409 (3.2), 200 (3.1). */
export function unclaimedAnswer(
  claim: Exclude<ClaimResult, { kind: 'claimed' }>,
  base: DeliveryBase,
  context: AnswerContext,
): ReceiverAnswer {
  const { protocol, log } = context
  switch (claim.kind) {
    case 'completed':
      log({ ...base, outcome: 'duplicate', status: 200 })
      return json(200, { status: 'duplicate' })
    case 'processing':
      if (protocol === '3.1') {
        // 3.1: duplicates are answered 2xx and the first copy wins; its owner publishes it (and a crashed
        // owner's claim is taken over by the sender's next retry of the first copy, after the lease).
        log({
          ...base,
          outcome: 'duplicate',
          status: 200,
          message: 'identical delivery still being published by its first copy (3.1)',
        })
        return json(200, { status: 'duplicate' })
      }
      throw new Rejection(
        503,
        'delivery_in_flight',
        'this delivery is being processed; retry later',
        { 'retry-after': retryAfter(claim.leaseExpiresAt, context.now) },
        'in_flight',
      )
    case 'capacity':
      throw new Rejection(
        429,
        'too_many_deliveries',
        'this sender holds too many undelivered keys',
        { 'retry-after': '60' },
        'too_many',
      )
    case 'conflict':
      if (protocol === '3.1') {
        log({
          ...base,
          outcome: 'duplicate',
          status: 200,
          message: 'changed payload under a used key: first copy wins (3.1)',
        })
        return json(200, { status: 'duplicate' })
      }
      throw new Rejection(
        409,
        'idempotency_key_reused',
        'this idempotency_key was used for a different payload',
        {},
        'conflict',
      )
  }
}

/** The answer to a convergence verdict other than `proceed`. */
export function convergenceAnswer(
  observed: Exclude<ConvergenceResult, 'proceed'>,
  taskId: string,
  base: DeliveryBase,
  context: AnswerContext,
): ReceiverAnswer {
  if (observed === 'conflict') {
    throw new Rejection(
      409,
      'terminal_conflict',
      `task ${taskId} already reached a different terminal outcome`,
      {},
      'conflict',
    )
  }
  if (observed === 'in_progress') {
    throw new Rejection(
      503,
      'delivery_in_flight',
      `task ${taskId}'s outcome is being published; retry later`,
      { 'retry-after': String(context.leaseSeconds) },
      'in_flight',
    )
  }
  context.log({ ...base, outcome: observed, status: 200 })
  return json(200, { status: observed })
}

/** The 503 of a publish callback or inbox writer that failed. */
export function publishFailed(error: unknown): Rejection {
  const cause = WebhookError.is(error) ? (error.cause as Error | undefined) : (error as Error | undefined)
  return new Rejection(
    503,
    'publish_failed',
    `the event could not be published: ${cause?.message ?? 'error'}`,
    { 'retry-after': '5' },
    'unavailable',
  )
}

/** The 503 of a store that failed mid-delivery. */
export const storeUnavailable = () =>
  new Rejection(
    503,
    'store_unavailable',
    'the dedup store is unavailable; retry later',
    { 'retry-after': '5' },
    'unavailable',
  )

/**
 * Decides a verified delivery in the store's transactional inbox: one transaction (shared with the deliveries
 * arriving with it) remembers the nonce, claims, converges, writes the event and completes.
 */
export async function acceptInInbox(
  inbox: DeliveryInbox,
  delivery: InboxDelivery,
  base: DeliveryBase,
  context: AnswerContext,
): Promise<ReceiverAnswer> {
  let outcome
  try {
    outcome = await inbox.accept(delivery)
  } catch (error) {
    if (WebhookError.is(error) && error.code === 'webhook_publish_failed') throw publishFailed(error)
    throw storeUnavailable()
  }
  switch (outcome.kind) {
    case 'replayed':
    case 'replay_capacity':
      throw nonceRejection(outcome.kind, delivery.nonce?.keyid ?? '')
    case 'claim':
      return unclaimedAnswer(outcome.claim, base, context)
    case 'convergence':
      return convergenceAnswer(outcome.result, delivery.observation?.taskId ?? '', base, context)
    case 'published':
      context.log({ ...base, outcome: 'published', status: 200 })
      return json(200, { status: 'accepted' })
  }
}
