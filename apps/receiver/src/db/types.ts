/**
 * The receiver's own tables (registrations, published events, verification failures, settings) behind one
 * small interface, implemented once for SQLite and PostgreSQL (database.ts). The dedup claims, convergence
 * records and replay nonces live in the @adwire/store-* stores, on the same file or schema.
 *
 * Times are Unix seconds (fractional allowed).
 */
import type { PayloadShape, RelayEvent } from '@adwire/webhooks'

/** How a registration's deliveries authenticate, as stored (secrets included: never sent out by the API). */
export type AuthConfig =
  | { readonly mode: 'rfc9421'; readonly jwks: { readonly keys: readonly Record<string, unknown>[] } }
  | { readonly mode: 'rfc9421'; readonly jwksUri: string }
  | { readonly mode: 'rfc9421'; readonly agentUrl: string; readonly brandJsonUrl?: string }
  /** Keys found from the agent's `get_adcp_capabilities` (`identity.brand_json_url`, `key_origins`). */
  | {
      readonly mode: 'rfc9421'
      readonly agentUrl: string
      readonly discovery: 'capabilities'
      readonly agentProtocol?: 'mcp' | 'a2a'
    }
  | { readonly mode: 'hmac'; readonly secret: string }
  | { readonly mode: 'bearer'; readonly token: string }

/** The payload shapes the receiver core reads (task envelopes, list events, keyed events). */
export type RegistrationShape = PayloadShape

export interface RegistrationRecord {
  readonly id: string
  readonly auth: AuthConfig
  readonly shape?: RegistrationShape
  /** The `push_notification_config.token` deliveries must echo. */
  readonly token?: string
  readonly retryHorizonSeconds?: number
  readonly label?: string
  /**
   * The seller (typically its agent URL) whose deliveries this registration receives: registrations naming
   * the same sender share one dedup keyspace and terminal outcomes. Absent: the registration is its own
   * keyspace (or, with brand.json discovery, the agent's).
   */
  readonly sender?: string
  /**
   * The publisher whose `/.well-known/adagents.json` `signing_keys[]` pins the agent's keys (brand.json
   * registrations only): a domain, or an origin URL (`http://` ones in development only).
   */
  readonly publisherDomain?: string
  /** The seller's key revocation list (RFC 9421 registrations only); stale or unreadable fails closed. */
  readonly revocationUrl?: string
  readonly createdAt: number
}

/** One published event as the publish callback hands it over. */
export interface NewEvent {
  readonly registrationId: string
  readonly sender: string
  readonly idempotencyKey: string
  readonly operationId?: string
  readonly taskId?: string
  readonly taskType?: string
  readonly status?: string
  readonly terminal: boolean
  readonly receivedAt: number
  /** The body exactly as received (UTF-8 JSON). */
  readonly payload: string
  /** Queue it for the downstream forwarder. */
  readonly forward: boolean
  /**
   * The receiver core took this delivery over from an owner whose lease ran out unacknowledged: a row already
   * there is that owner's publication of this same event, not a second one.
   */
  readonly takeover?: boolean
}

/** An inbox transaction, as the storage hands it to the event writer (opaque to the app). */
export type InboxTransactionHandle = object

/** Where a published event was stored. */
export interface RecordedEvent {
  readonly seq: number
  readonly publications: number
  /** A takeover found the event already stored by the earlier owner: nothing was written. */
  readonly recovered: boolean
}

export interface EventRecord {
  /** Insertion order, shared by all instances: the stream's cursor. */
  readonly seq: number
  readonly registrationId: string
  readonly idempotencyKey: string
  readonly operationId: string | null
  readonly taskId: string | null
  readonly taskType: string | null
  readonly status: string | null
  readonly receivedAt: number
  /** How many times the receiver core published this event: 1, always (the counter is the proof). */
  readonly publications: number
}

export interface NewFailure {
  readonly registrationId: string
  readonly code: string
  readonly httpStatus: number
  readonly message?: string
  readonly at: number
}

export interface FailureRecord extends NewFailure {
  readonly seq: number
}

/** An event leased to one relay (the lease's `fence` proves it): the relay's event of @adwire/webhooks. */
export type ForwardJob = RelayEvent

/** Where the stream stands: the last event and failure sequence numbers seen. */
export interface StreamCursor {
  readonly events: number
  readonly failures: number
}

export interface ReceiverDatabase {
  readonly kind: 'sqlite' | 'postgres'
  /** Stores `value` under `name` unless a value is there already; resolves with the stored value. */
  putSettingIfAbsent(name: string, value: string): Promise<string>
  getSetting(name: string): Promise<string | undefined>

  insertRegistration(record: RegistrationRecord): Promise<void>
  getRegistration(id: string): Promise<RegistrationRecord | undefined>
  listRegistrations(): Promise<RegistrationRecord[]>

  /**
   * Inserts a published event. Should the same (registration, idempotency key) arrive again: after a takeover
   * the stored row is that same publication (`recovered`, nothing written); otherwise it is a second
   * publication and `publications` is incremented in the same statement, so the counter cannot miss one.
   * `transaction` is the open transaction of the storage's inbox that the row joins (the PostgreSQL
   * connection holding it; SQLite has one connection, already in it).
   */
  recordEvent(event: NewEvent, transaction?: InboxTransactionHandle): Promise<RecordedEvent>
  /**
   * {@link recordEvent} for several events at once (PostgreSQL: one call for every 500; SQLite: one statement
   * for all but takeovers), results in the same order. The events must have distinct (registration,
   * idempotency key) pairs.
   */
  recordEvents(events: readonly NewEvent[], transaction?: InboxTransactionHandle): Promise<RecordedEvent[]>
  /** The latest `limit` events of a registration, oldest first. */
  listEvents(registrationId: string, limit: number): Promise<EventRecord[]>
  /** Events with `seq > after`, oldest first (all registrations unless one is named). */
  eventsAfter(after: number, limit: number, registrationId?: string): Promise<EventRecord[]>

  recordFailure(failure: NewFailure): Promise<FailureRecord>
  listFailures(registrationId: string, limit: number): Promise<FailureRecord[]>
  failuresAfter(after: number, limit: number, registrationId?: string): Promise<FailureRecord[]>

  /** The highest sequence numbers now: where a new stream starts. */
  cursor(): Promise<StreamCursor>

  /** Leases up to `limit` events due for forwarding (pending, due, not leased by anyone alive). */
  leaseForwarding(now: number, limit: number, leaseSeconds: number): Promise<ForwardJob[]>
  /** Marks a leased event forwarded; false when the lease was lost. */
  markForwarded(seq: number, fence: string, now: number): Promise<boolean>
  /** {@link ReceiverDatabase.markForwarded} for a batch, in one statement; whether each lease held, in order. */
  markForwardedMany(jobs: readonly { seq: number; fence: string }[], now: number): Promise<boolean[]>
  /** Schedules another attempt of a leased event; false when the lease was lost. */
  retryForwarding(seq: number, fence: string, nextAttemptAt: number, error: string): Promise<boolean>
  /** Gives a leased event back unattempted (the forwarder is stopping). */
  releaseForwarding(seq: number, fence: string): Promise<void>
  /** How many events wait for the forwarder. */
  pendingForwards(): Promise<number>
  /** The events waiting for the forwarder: how many, and `receivedAt` of the oldest (the relay's lag). */
  forwardingBacklog(): Promise<{ count: number; oldestReceivedAt?: number }>

  /** Deletes verification failures older than `before`; resolves with how many. */
  sweep(before: number): Promise<number>
  /**
   * Expires the events past their retention at `now` (Unix seconds) that have nothing left to forward:
   * PostgreSQL drops their day partitions whole (and creates those ahead of `now`), SQLite deletes them in
   * batches. Resolves with how many (for a dropped partition, the catalogue's estimate of its rows).
   */
  sweepEvents(now: number): Promise<number>
}
