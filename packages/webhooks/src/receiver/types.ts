import type { HeaderInput, KeySource, ReplayStore, RevocationSource } from '@adwire/http-signatures'
import type { DeliveryInbox } from '../inbox.js'
import type { ClaimStore, ConvergenceStore } from '../stores.js'

/**
 * How a registration authenticates deliveries: exactly one mode, chosen when the buyer registered
 * (AdCP 3.1 security.mdx: a legacy `authentication` block selects HMAC or Bearer; otherwise RFC 9421).
 */
export type ReceiverAuth =
  | {
      readonly mode: 'rfc9421'
      /** The seller's keys: a JWKS, or a resolver (remote JWKS, brand.json discovery, adagents.json pins). */
      readonly keys: KeySource
    }
  | {
      readonly mode: 'hmac'
      /** The shared secret; two during a rotation. Deprecated scheme. */
      readonly secret: string | readonly string[]
    }
  | {
      readonly mode: 'bearer'
      /** The bearer credential; two during a rotation. Deprecated scheme. */
      readonly token: string | readonly string[]
    }

/**
 * The body shape a registration promises: set by the registration channel, never guessed when known.
 * `artifact-push` is `content-standards/artifact-webhook-payload.json` (a sales agent pushing content
 * artifacts), `revocation-notification` is `brand/revocation-notification.json` (a rights holder revoking
 * rights); `creative-status-changed` and `creative-purged` are the account-level creative events
 * (`creative/creative-*-webhook.json`, to `notification_configs[]`), `capabilities-changed` the seed's
 * agent-level capabilities.changed (`capabilities_version`), `account-status-changed` the seed's account
 * status change (`account_id`, `transition`), pushed to agent-level configs; all are deduplicated on their `idempotency_key`,
 * like the list events.
 */
export type PayloadShape =
  | 'mcp'
  | 'a2a'
  | 'property-list'
  | 'collection-list'
  | 'artifact-push'
  | 'revocation-notification'
  | 'creative-status-changed'
  | 'creative-purged'
  | 'capabilities-changed'
  | 'account-status-changed'

/** One webhook registration: a URL the buyer gave a seller, and how deliveries to it are authenticated. */
export interface Registration {
  readonly id: string
  readonly auth: ReceiverAuth
  /**
   * The seller this registration's deliveries come from (typically its agent URL): when set, it is the dedup
   * keyspace and the terminal-convergence identity of every delivery the registration verifies, whatever the
   * auth mode and whichever signer a key resolver names. Registrations of one seller that give the same
   * `sender` share one keyspace: several URLs of one seller, its MCP and A2A registrations, and its HMAC and
   * RFC 9421 registrations during a migration (AdCP: both identity forms SHOULD map to one keyspace). Setting
   * it asserts that the registration's credentials belong to that seller.
   *
   * When absent: the signer an RFC 9421 key resolver names (`rfc9421:<agents[].url>`), else the registration
   * alone (`rfc9421:<id>`, `hmac:<id>`, `bearer:<id>`).
   */
  readonly sender?: string
  /** The body shape; detected from the body (MCP or A2A) only when absent. */
  readonly shape?: PayloadShape
  /** The `push_notification_config.token` the buyer registered; deliveries must echo it. */
  readonly token?: string
  /** The sender's advertised `delivery_retry_horizon_seconds`; retention is at least max(24 h, this). */
  readonly retryHorizonSeconds?: number
}

/** What the publish callback receives: one accepted delivery, exactly once. */
export interface ReceivedEvent {
  readonly registrationId: string
  /** Verified sender identity: the dedup keyspace. */
  readonly sender: string
  readonly shape: PayloadShape
  readonly idempotencyKey: string
  readonly notificationId?: string
  readonly operationId?: string
  readonly taskId?: string
  readonly taskType?: string
  /** Task status (MCP/A2A) or the event name (property and collection lists). */
  readonly status?: string
  readonly terminal: boolean
  /** The AdCP data: the MCP `result`, the A2A DataPart, or the list event itself. */
  readonly data: Record<string, unknown> | null
  /** The whole parsed body. */
  readonly payload: Record<string, unknown>
  /** The raw body bytes as received. */
  readonly body: Uint8Array
  /** True when this notification_id was already delivered under another idempotency key (a re-emission). */
  readonly reemission: boolean
  /**
   * True when this delivery took publication over from an earlier owner whose lease ran out before it
   * acknowledged: that owner may have died after its publish callback returned, so this event may already
   * be published. The core is exactly-once up to the acknowledgement and at-least-once across that one
   * window; a sink that must never hold an event twice stores it keyed by (registrationId, idempotencyKey)
   * and, on a takeover, treats a row already there as this same publication.
   */
  readonly takeover: boolean
  /** Unix seconds. */
  readonly receivedAt: number
}

/** Why a delivery was not published, for logs and metrics. Never silently discarded. */
export interface ReceiverLogEntry {
  readonly registrationId?: string
  readonly outcome:
    'published' | 'duplicate' | 'stale' | 'rejected' | 'conflict' | 'in_flight' | 'unavailable' | 'too_many'
  readonly status: number
  readonly code?: string
  readonly message?: string
  readonly idempotencyKey?: string
  readonly sender?: string
}

export interface ReceiverLimits {
  /** Largest body accepted, bytes (413 beyond). Default 1 MiB. */
  readonly maxBodyBytes?: number
  /** How long a publisher owns a delivery before another may take it over, seconds. Default 30. */
  readonly leaseSeconds?: number
  /** Least retention of dedup records, seconds. Default 86,400 (24 h). */
  readonly retentionSeconds?: number
  /** Most live dedup records per sender (429 beyond). Default 1,000,000. */
  readonly maxRecordsPerSender?: number
  /**
   * Deliveries a second one RFC 9421 signing key may sustain (checklist step 9a/13: `webhook_signature_rate_abuse`
   * beyond). The replay store then holds at most `ceil(rate × 420)` live nonces for the key, a nonce living at
   * most 420 s (60 s skew + 300 s signature window + 60 s). Default 5,000 (2,100,000 nonces a key).
   */
  readonly maxNonceRatePerKey?: number
  /**
   * Most live nonces per keyid, a count cap kept for compatibility: when given it wins over
   * {@link ReceiverLimits.maxNonceRatePerKey} (a count `n` sustains `n / 420` deliveries a second whatever the
   * sender's clock skew). Default: the rate's cap, 2,100,000 (it was 100,000, which refused one key above about
   * 278 deliveries a second).
   */
  readonly maxNoncesPerKey?: number
}

/**
 * A delivery as an HTTP layer hands it to {@link WebhookReceiver.answer}: a web `Request` fits (see
 * {@link WebhookReceiver.handle}); a server can also give its own request's fields without building one.
 */
export interface IncomingDelivery {
  readonly method: string
  /** The absolute URL the sender signed (`@target-uri`). */
  readonly url: string
  /** WHATWG `Headers`, or a plain object (names in any case; a repeated field as a list, in order). */
  readonly headers: HeaderInput
  /**
   * Reads the raw body bytes exactly as received, refusing more than `limit` bytes: throw
   * `BodyTooLargeError` (answered 413) without reading further. Called at most once, and only after the
   * checks that need no body (registration, method, media type).
   */
  readBody(limit: number): Promise<Uint8Array>
}

/** The receiver's answer to a delivery: status, headers (lower-case names) and a JSON body. */
export interface ReceiverAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What the registration lookup sees of a delivery (a web `Request` fits). */
export interface RegistrationLookup {
  readonly method: string
  readonly url: string
  readonly headers: HeaderInput
}

export interface WebhookReceiverOptions {
  /** Finds the registration a delivery is for (typically by the id in its path); undefined answers 404. */
  readonly registration: (
    request: RegistrationLookup,
  ) => Registration | undefined | Promise<Registration | undefined>
  /** Durable dedup and publication ownership. */
  readonly claims: ClaimStore
  /** Durable terminal convergence per (sender, task_id). */
  readonly convergence: ConvergenceStore
  /** Durable (keyid, nonce) replay store, shared by every instance. */
  readonly replayStore: ReplayStore
  /**
   * Publishes an accepted event; the delivery is acknowledged (200) only after it resolves. Called once per
   * (sender, idempotency_key), except after a {@link ReceivedEvent.takeover}. Required unless `inbox` is given.
   */
  readonly publish?: (event: ReceivedEvent) => Promise<void>
  /**
   * A transactional inbox, for a publisher that writes into the same store as the dedup records: the nonce,
   * the claim, the convergence record, the event (written by the inbox's writer) and the acknowledgement
   * commit in one transaction shared with the deliveries arriving together, instead of claim → publish →
   * complete. `claims`, `convergence` and `replayStore` must be that store's (the replay cap is read from
   * `replayStore` before any cryptography).
   */
  readonly inbox?: DeliveryInbox
  readonly revocation?: RevocationSource
  /** Unix seconds. Default: the system clock. */
  readonly now?: () => number
  readonly limits?: ReceiverLimits
  /**
   * `'3.2'` (default): a changed payload under a used key is 409, an identical delivery in flight is 503, and
   * terminal outcomes converge per task. `'3.1'`: duplicates are answered 2xx always and the first copy wins
   * (a changed payload and a copy arriving while the first is still being published are both 200
   * `duplicate`: the first copy's owner publishes it), and there is no convergence step.
   */
  readonly protocol?: '3.2' | '3.1'
  /** Called for every delivery with how it ended. */
  readonly log?: (entry: ReceiverLogEntry) => void
  /**
   * Where RFC 9421 signatures are checked on node:crypto (`VerifyOptions.offload` of @adwire/http-signatures):
   * `'always'` suits a busy service (verification on the thread pool while the event loop serves the next
   * request). Default `'auto'`.
   */
  readonly offload?: 'auto' | 'always' | 'never'
}

export interface WebhookReceiver {
  /** Handles one delivery: a web-standard Request in, a Response out. Never throws. */
  handle(request: Request): Promise<Response>
  /**
   * The same for a server that does not build web Requests (node:http, for one): the delivery's fields in,
   * the answer to write out. Never throws.
   *
   * @example
   * const answer = await receiver.answer({ method: req.method!, url, headers: req.headers, readBody: (limit) => readLimited(req, limit) })
   * res.writeHead(answer.status, answer.headers).end(answer.body)
   */
  answer(delivery: IncomingDelivery): Promise<ReceiverAnswer>
}
