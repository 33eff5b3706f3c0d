/**
 * The durable state behind webhooks, as interfaces: each has an in-memory implementation here (for examples
 * and unit tests) and durable ones in @adwire/store-sqlite and @adwire/store-postgres. Every operation is
 * atomic on its own (claim if absent, compare-and-set on the fence): no caller ever reads, decides and
 * writes back.
 *
 * Times are Unix seconds (numbers, may be fractional) passed in by the caller, so tests control the clock.
 */

/** Which keyspace a claim lives in: webhook deliveries, or request idempotency (agent tasks). */
export type ClaimNamespace = 'webhook' | 'request'

export interface ClaimInput {
  readonly namespace: ClaimNamespace
  /** Whose keyspace: the verified sender of a webhook, the principal of a request. */
  readonly scope: string
  /** The idempotency key. */
  readonly key: string
  /** SHA-256 (hex) of the RFC 8785 canonical payload: binds the key to one payload. */
  readonly fingerprint: string
  readonly now: number
  /** How long the owner may work before another delivery may take the claim over. */
  readonly leaseSeconds: number
  /** How long the record is kept after its first acceptance (never extended by retries). */
  readonly retentionSeconds: number
  /** The most live records one scope may hold; beyond it the claim answers `capacity`. */
  readonly maxPerScope?: number
}

/**
 * The outcome of a claim:
 * - `claimed`: the caller now owns publication, under `fence`, until the lease ends (`takeover` when an
 *   earlier owner's lease had expired without acknowledging);
 * - `processing`: the same payload is owned by someone whose lease is still alive (answer 503);
 * - `completed`: the same payload was acknowledged; `result` is what was stored with it (answer 200/replay);
 * - `conflict`: the key is bound to another payload (answer 409);
 * - `capacity`: the scope holds too many records (answer 429).
 */
export type ClaimResult =
  | { readonly kind: 'claimed'; readonly fence: string; readonly takeover: boolean }
  | { readonly kind: 'processing'; readonly leaseExpiresAt: number }
  | { readonly kind: 'completed'; readonly result: string | null }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'capacity' }

export interface ClaimRef {
  readonly namespace: ClaimNamespace
  readonly scope: string
  readonly key: string
  readonly fence: string
}

/** Dedup records with publication ownership (webhooks) and request idempotency records (agent tasks). */
export interface ClaimStore {
  claim(input: ClaimInput): Promise<ClaimResult>
  /** Acknowledges a claim the caller still owns; `result` (e.g. a cached response) is kept for replays. False if the fence was lost. */
  complete(ref: ClaimRef, now: number, result?: string | null): Promise<boolean>
  /** Gives up a claim the caller still owns without acknowledging, so that the next delivery may claim it at once. */
  release(ref: ClaimRef): Promise<void>
  /** Deletes records past their retention; resolves with how many. */
  sweep(now: number): Promise<number>
}

/** Observations of one seller task, for terminal convergence (first terminal wins). */
export interface TaskObservation {
  /** Verified seller identity. */
  readonly sender: string
  readonly taskId: string
  /** Whether the status is terminal (completed, failed, canceled, rejected). */
  readonly terminal: boolean
  /**
   * SHA-256 (hex) of the JCS channel-neutral `{status, value}` record (`terminalComparison`) for terminal
   * observations; a non-terminal one carries `''` (stores read it only when `terminal`).
   */
  readonly comparison: string
  /** The delivery making the observation (its idempotency key). */
  readonly deliveryKey: string
  readonly now: number
  readonly leaseSeconds: number
  readonly retentionSeconds: number
}

/**
 * - `proceed`: publish it (a non-terminal before any terminal, or the first terminal, now owned by this delivery);
 * - `duplicate`: this terminal outcome was already published (acknowledge, do not republish);
 * - `stale`: a non-terminal after the terminal (acknowledge, do not publish as current);
 * - `conflict`: a different terminal outcome than the one that won (409);
 * - `in_progress`: the same terminal outcome is being published by another delivery (503).
 */
export type ConvergenceResult = 'proceed' | 'duplicate' | 'stale' | 'conflict' | 'in_progress'

export interface ConvergenceStore {
  observe(observation: TaskObservation): Promise<ConvergenceResult>
  /** Marks the terminal outcome published by `deliveryKey` (after the publish callback succeeded). */
  settle(sender: string, taskId: string, deliveryKey: string, now: number): Promise<void>
  /** Gives up publishing a terminal outcome (the publish failed), so another delivery may take it at once. */
  release(sender: string, taskId: string, deliveryKey: string): Promise<void>
  sweep(now: number): Promise<number>
}

/** A webhook waiting in the sender's durable outbox. */
export interface OutboxEntry {
  readonly id: string
  /** The registration it belongs to (whose webhook_activity lists it). */
  readonly destination: string
  readonly url: string
  /** The envelope's idempotency key: the same on every retry of these bytes. */
  readonly idempotencyKey: string
  /** The serialised body, sent byte for byte on every attempt. */
  readonly body: string
  /** Extra headers to send (content type; legacy auth headers are added per attempt, never stored). */
  readonly headers: Readonly<Record<string, string>>
  /** State-shaped events for one resource share a key: a newer one supersedes a pending older one. */
  readonly coalesceKey: string | null
  readonly createdAt: number
  /** Not before this time. */
  readonly nextAttemptAt: number
  /** No attempt after this time (the advertised delivery_retry_horizon_seconds). */
  readonly deadlineAt: number
  /** Attempts made so far. */
  readonly attempts: number
  /**
   * The media buys the event concerns (a notify's `mediaBuyId`, a delivery report's `media_buy_id`s), without
   * duplicates, in the order given; empty for events of no buy.
   */
  readonly mediaBuyIds: readonly string[]
  /**
   * A media buy's final delivery report: it closes its buys (see {@link OutboxStore.enqueue}) and is never
   * leased while an earlier entry to the same `url` sharing one of its buys is still pending (in any
   * destination, whether due, leased, scheduled for retry or coalescing). It goes once those are delivered,
   * failed or superseded. Order is kept per receiver URL and resource, not across URLs: a push URL answering
   * errors never delays the final report to a healthy reporting URL.
   */
  readonly barrier: boolean
}

/** What `enqueue` takes: media buy ids and the barrier flag default to none and false. */
export type NewOutboxEntry = Omit<OutboxEntry, 'attempts' | 'mediaBuyIds' | 'barrier'> & {
  readonly mediaBuyIds?: readonly string[]
  readonly barrier?: boolean
}

/** What `enqueue` did. */
export interface EnqueueResult {
  /** Pending entries this one replaced (same destination and coalesce key, never attempted), oldest first. */
  readonly superseded: string[]
  /**
   * Present when nothing was stored: these media buys of the entry are closed (their final report was
   * enqueued, or {@link OutboxStore.closeMediaBuys} closed them), so nothing more fires for them.
   */
  readonly closed?: string[]
}

/** A leased entry: the worker holding `fence` may attempt it until the lease ends. */
export interface LeasedOutboxEntry extends OutboxEntry {
  readonly fence: string
}

/** How one delivery attempt ended. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly httpStatus: number }
  | {
      readonly kind: 'retry'
      readonly nextAttemptAt: number
      readonly httpStatus?: number
      readonly error?: string
      readonly activityStatus: ActivityStatus
    }
  | {
      readonly kind: 'failed'
      readonly httpStatus?: number
      readonly error?: string
      readonly activityStatus: ActivityStatus
    }

/** webhook_activity `status` values. */
export type ActivityStatus = 'success' | 'failed' | 'timeout' | 'connection_error' | 'pending'

/** One attempt as a buyer sees it in webhook_activity. */
export interface ActivityEntry {
  readonly idempotency_key: string
  readonly status: ActivityStatus
  readonly http_status_code: number | null
  readonly attempt: number
  readonly error_message: string | null
  /** Unix seconds. */
  readonly at: number
}

/**
 * How long the stores keep webhook_activity rows: 30 days from the attempt, the retention AdCP requires of
 * `webhook_activity[]` (`list-creatives-request.json`, `creative-purged-webhook.json`: "MUST"). The stores'
 * sweeps delete older rows, and on SQLite (whose activity rows go with their entry) keep finished entries as
 * long.
 */
export const ACTIVITY_RETENTION_SECONDS = 30 * 86_400

/**
 * The sender's durable outbox. Closed media buys (a final report enqueued, or closed without one) are
 * remembered in their own records, which are not deleted with the outbox rows: whoever prunes them must keep
 * each one at least the retry horizon (`deadlineAt`) longer than every outbox entry of its buy, or a late event
 * for the buy would be accepted again.
 */
export interface OutboxStore {
  /**
   * Adds an entry, atomically with respect to every other writer of the outbox:
   * - when one of its `mediaBuyIds` is closed, stores nothing and resolves with `closed` (those buys);
   * - when it has a coalesceKey, pending entries of the same destination and key that have not been attempted
   *   yet are superseded in the same transaction; resolves with their ids;
   * - a `barrier` entry closes its media buys in the same transaction.
   */
  enqueue(entry: NewOutboxEntry): Promise<EnqueueResult>
  /**
   * Leases up to `limit` entries due at `now` (pending, nextAttemptAt ≤ now, not leased by anyone alive),
   * leaving out barriers that still wait for an earlier pending entry to their URL of one of their media buys.
   */
  lease(now: number, limit: number, leaseSeconds: number): Promise<LeasedOutboxEntry[]>
  /** Records an attempt of a leased entry (fence checked) and its webhook_activity row. False if the fence was lost. */
  record(id: string, fence: string, outcome: AttemptOutcome, now: number): Promise<boolean>
  /** webhook_activity of a destination, newest first. */
  activity(destination: string, limit?: number): Promise<ActivityEntry[]>
  /** Entries not yet delivered, failed or superseded (for inspection and tests). */
  pending(destination?: string): Promise<OutboxEntry[]>
  /** Which of these media buys are closed (in the order given, without duplicates). */
  closedMediaBuys(mediaBuyIds: readonly string[]): Promise<string[]>
  /**
   * Closes media buys that end without a final report (no reporting webhook): nothing more is enqueued for
   * them. Resolves with those this call closed (not closed before), in the order given.
   */
  closeMediaBuys(mediaBuyIds: readonly string[], now: number): Promise<string[]>
}
