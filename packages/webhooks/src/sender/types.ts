import type { AdcpJwk } from '@adwire/http-signatures'
import type { ActivityEntry, OutboxStore } from '../stores.js'
import type { FireFacts, FireLogStore } from './fire-log.js'

/**
 * A legacy authentication block (AdCP 3.x security.mdx, deprecated, removed in 4.0): exactly one scheme,
 * `HMAC-SHA256` or `Bearer`, and a credential of at least 32 characters. Its presence selects that scheme for
 * the URL instead of RFC 9421; the two are never combined.
 */
export interface LegacyAuthentication {
  readonly schemes: readonly string[]
  readonly credentials: string
}

/** An AdCP `push_notification_config` (`core/push-notification-config.json`), as the buyer sent it. */
export interface PushNotificationConfigInput {
  readonly url: string
  /** Echoed verbatim in every payload. Required by this sender: the envelope cannot be built without it. */
  readonly operation_id?: string
  /** Echoed as the payload's `token` (16 to 4096 characters). */
  readonly token?: string
  readonly authentication?: LegacyAuthentication
}

/** An A2A `TaskPushNotificationConfig` push-notification config (no operation_id: A2A defines none). */
export interface TaskPushNotificationConfigInput {
  readonly id?: string
  readonly url: string
  /** Sent as the `X-A2A-Notification-Token` header on every delivery. */
  readonly token?: string
  readonly authentication?: LegacyAuthentication
}

/**
 * An account-level or agent-level `notification_configs[]` entry (AdCP 3.1.19 `core/notification-config.json`):
 * its events carry event-specific payloads (`creative/creative-status-changed-webhook.json`, ...), not a task
 * envelope.
 */
export interface NotificationConfigInput {
  readonly url: string
  /** Echoed as the payload's `subscriber_id`. */
  readonly subscriber_id: string
  readonly authentication?: LegacyAuthentication
}

/** Where an event-specific payload goes: one subscribed `notification_configs[]` entry. */
export interface SubscriberRegistration {
  readonly channel: 'subscriber'
  readonly config: NotificationConfigInput
  /** Whose webhook_activity lists the deliveries. Default `subscriber:<subscriber_id>`. */
  readonly destination?: string
}

/**
 * An event-specific payload: the sender adds the members every such payload carries (`idempotency_key`,
 * `notification_type`, `fired_at`, `subscriber_id`) before the event's own.
 */
export interface SubscriberEvent {
  /** `enums/notification-type.json`, e.g. `creative.status_changed`, `account.status_changed`. */
  readonly notification_type: string
  /** The event's own members (`creative_id`, `status`, ...). */
  readonly payload: Readonly<Record<string, unknown>>
}

/** The A2A wire version of A2A-shape deliveries. */
export type A2AVersion = '0.3' | '1.0'

/**
 * Where and how to deliver, decided by the channel the buyer registered through (AdCP webhooks.mdx,
 * "Registration channel determines envelope shape"):
 * - `adcp`: a `push_notification_config` task argument (over MCP, A2A or REST) or a `reporting_webhook`:
 *   the flat MCP-shape AdCP envelope;
 * - `a2a`: an A2A TaskPushNotificationConfig: an A2A `Task` for final states and a
 *   `TaskStatusUpdateEvent` for interim ones, in A2A v0.3 or 1.0 form (`a2aVersion`).
 *
 * Pass the registration as it is now: the URL, token and credential are stored with each outbox entry when
 * it is enqueued, so an update (update_media_buy with a new URL) applies from the next fire.
 */
export type WebhookRegistration =
  | {
      readonly channel: 'adcp'
      readonly config: PushNotificationConfigInput
      /** Whose webhook_activity lists the deliveries. Default: `operation_id`, else the URL. */
      readonly destination?: string
      /** The task request's top-level `context`, echoed verbatim in every payload of the operation. */
      readonly context?: Readonly<Record<string, unknown>>
    }
  | {
      readonly channel: 'a2a'
      readonly config: TaskPushNotificationConfigInput
      /** Whose webhook_activity lists the deliveries. Default: the config `id`, else the URL. */
      readonly destination?: string
      /** Echoed as `context` inside the AdCP DataPart. */
      readonly context?: Readonly<Record<string, unknown>>
      /**
       * The A2A version the buyer speaks (from the agent card or the transport it registered through):
       * `'0.3'` a bare `Task` / `TaskStatusUpdateEvent` with `kind` members and lowercase states, `'1.0'` a
       * StreamResponse `{task}` / `{statusUpdate}` with `TASK_STATE_*` states and parts without `kind`.
       * Default: the sender's `a2aVersion`.
       */
      readonly a2aVersion?: A2AVersion
      /**
       * The A2A Task the buyer holds (the one its SendMessage answered with): every push carries its `id` and
       * `contextId`, so that the buyer matches it and GetTask on them works. Default: the event's `task_id`
       * and `context_id` (for a registration made outside an A2A task).
       */
      readonly task?: { readonly id: string; readonly contextId: string }
    }

/** One event to deliver: the MCP envelope members the seller decides (the rest come from the registration). */
export interface TaskEvent {
  readonly task_id: string
  /** `enums/task-type.json`, e.g. `create_media_buy`, or `media_buy_delivery` for delivery reports. */
  readonly task_type: string
  /** The task status (`enums/task-status.json`), never a media buy status. */
  readonly status: string
  readonly message?: string
  /** Status-specific: the full task response (completed, failed), progress (working), ... */
  readonly result?: Readonly<Record<string, unknown>>
  /** Logical-event identity of state-shaped events; kept when a changed payload is re-emitted. */
  readonly notification_id?: string
  /** A2A `contextId` (default: the task id); echoed as `context_id` in MCP envelopes when given. */
  readonly context_id?: string
  readonly protocol?: string
  /** ISO 8601 time the event was generated; default the sender's clock. Fixed once serialised. */
  readonly timestamp?: string
}

/** Sender-side facts about an event that are not part of its payload. */
export interface NotifyOptions {
  /**
   * Coalesce this state-shaped event with later ones for the same resource (`key`) in one destination:
   * a newer event replaces a pending older one. `class` picks the window (default `impairment`).
   * Delivery reports cannot be coalesced.
   */
  readonly coalesce?: { readonly key: string; readonly class?: string }
  /**
   * The media buy the event is about (a delivery report's `media_buy_id`s count too): recorded on its outbox
   * entry, so that the buy's `final` report is sent only after it; refused (`webhook_after_final`) once the
   * buy's final report was queued or the buy closed, by this sender or any other on the same outbox, before
   * or after a restart.
   */
  readonly mediaBuyId?: string
  /**
   * Note the fire in the sender's fire log (`fireLog`), for the `owner`'s webhook_activity: written with the
   * outbox entry (in the caller's transaction when one is open and the log's store joins it).
   */
  readonly fire?: FireFacts
}

/** Exponential back-off with jitter (all in seconds). */
export interface RetryOptions {
  /** First retry delay. Default 2. */
  readonly baseDelaySeconds?: number
  /** Largest back-off delay. Default 900. */
  readonly maxDelaySeconds?: number
  /** 0 to 1: the share of each delay that is randomised downwards (delay × (1 − jitter × random)). Default 0.5. */
  readonly jitter?: number
  /** Cap on a receiver's `Retry-After`. Default 3600. */
  readonly maxRetryAfterSeconds?: number
}

/**
 * A coalescence class: `windowSeconds` is how long the sender waits for a quieter moment after the latest
 * change; `maxDelaySeconds` is the declared maximum, never exceeded, counted from the oldest change the push
 * carries. `0` means no coalescence.
 */
export interface CoalesceClass {
  readonly windowSeconds: number
  readonly maxDelaySeconds: number
  /**
   * The receiver opted in to a longer maximum than the AdCP default of a built-in class (`impairment` 300 s,
   * `latency-sensitive` under 60 s). Without it such a class is refused.
   */
  readonly receiverOptIn?: boolean
}

/** What happened, for logs and metrics. */
export interface SenderLogEntry {
  readonly event:
    | 'enqueued'
    | 'superseded'
    | 'delivered'
    | 'retry'
    | 'failed'
    | 'lease_lost'
    | 'legacy_auth'
    | 'store_error'
  readonly destination?: string
  readonly id?: string
  readonly idempotencyKey?: string
  readonly attempt?: number
  readonly httpStatus?: number
  readonly nextAttemptAt?: number
  readonly message?: string
}

export interface WebhookSenderOptions {
  /** The durable outbox: an entry is stored before `notify` resolves. */
  readonly outbox: OutboxStore
  /** The fire log behind {@link WebhookSender.webhookActivity} (notify's `fire` option, a buy's `owner`). */
  readonly fireLog?: FireLogStore
  /** The private JWK (Ed25519 or ES256) for RFC 9421 signatures; its `kid` is the `keyid`. */
  readonly key: AdcpJwk
  /** Default: the global fetch. Called with `redirect: 'manual'`: a redirect is never followed. */
  readonly fetch?: typeof fetch
  /** Unix seconds (may be fractional). Default: the system clock. */
  readonly now?: () => number
  /** A number in [0, 1) for the jitter. Default Math.random. */
  readonly random?: () => number
  /** The advertised `webhook_signing.delivery_retry_horizon_seconds`: no attempt after it. Default 86,400. */
  readonly retryHorizonSeconds?: number
  readonly retry?: RetryOptions
  /**
   * Coalescence classes by name, merged over the defaults `impairment` (general: window and maximum 300 s)
   * and `latency-sensitive` (fraud, brand safety: none).
   */
  readonly coalesce?: Readonly<Record<string, CoalesceClass>>
  /** The A2A version of `a2a` registrations that do not name one. Default `'0.3'`. */
  readonly a2aVersion?: A2AVersion
  /**
   * Refuse (`INVALID_REQUEST`) a legacy Bearer registration for a task that changes state, listed in
   * `MUTATING_TASK_TYPES` (create_media_buy, update_media_buy, sync_creatives, build_creative, the property
   * and collection list changes, ...): Bearer gives the buyer no body integrity, and AdCP says sellers SHOULD
   * refuse it for mutating callbacks. HMAC-SHA256 stays allowed. Default true.
   */
  readonly refuseBearerForMutatingTasks?: boolean
  /** Most deliveries in flight at once. Default 8. */
  readonly concurrency?: number
  /** How long a leased entry belongs to this worker (must exceed the attempt timeout). Default 60. */
  readonly leaseSeconds?: number
  /** Time limit of one attempt, connection to response headers and a short read of the body. Default 10,000. */
  readonly timeoutMs?: number
  /** How often an idle worker looks for due entries. Default 1,000. */
  readonly pollIntervalMs?: number
  readonly log?: (entry: SenderLogEntry) => void
}

/** The status of a task as this sender knows it, for {@link WebhookSender.task}. */
export interface TaskWebhooksInit {
  readonly task_id: string
  readonly task_type: string
  /** The status of the initial response (e.g. `submitted`, `working`), or the current one after a restart. */
  readonly status: string
  readonly context_id?: string
  readonly mediaBuyId?: string
}

/** The webhooks of one task: one per later status change, none after a terminal status. */
export interface TaskWebhooks {
  /** The last status (initial or notified). */
  readonly status: string
  /** True once the status is completed, failed, canceled or rejected. */
  readonly terminal: boolean
  /**
   * Fires a webhook when `status` differs from the last one and resolves with its idempotency key; resolves
   * with undefined (no webhook) for an unchanged status. Throws `webhook_after_terminal` after a terminal status.
   */
  update(
    status: string,
    details?: Pick<TaskEvent, 'result' | 'message' | 'notification_id' | 'timestamp'>,
  ): Promise<string | undefined>
}

/** A delivery report for {@link MediaBuyWebhooks.report} and {@link MediaBuyWebhooks.finish}. */
export interface DeliveryReport {
  /** `media-buy/media-buy-delivery-webhook-result.json`; never `aggregated_totals`. */
  readonly result: Readonly<Record<string, unknown>>
  /** Default `delivery_{media_buy_id}_{sequence_number or notification_type}`. */
  readonly task_id?: string
  readonly message?: string
  readonly timestamp?: string
}

export interface MediaBuyWebhooksInit {
  readonly mediaBuyId: string
  /** The buy's push_notification_config: task status changes and impairments. */
  readonly notifications?: WebhookRegistration
  /** The buy's reporting_webhook: delivery reports. */
  readonly reporting?: WebhookRegistration
  /**
   * The buy's current status: completed, canceled or rejected means it already had its final report (the
   * outbox knows that too when this sender's outbox closed it; this covers buys closed elsewhere).
   */
  readonly status?: string
  /** The principal whose webhook_activity lists the buy's fires (noted in the sender's fire log). */
  readonly owner?: string
}

/** The webhooks of one media buy, with the AdCP firing rules. */
export interface MediaBuyWebhooks {
  /** A state-shaped impairment to `notifications`, coalesced per resource `key` in its class's window. */
  impairment(event: TaskEvent, coalesce: { readonly key: string; readonly class?: string }): Promise<string>
  /** A scheduled (or delayed, adjusted, window_update) delivery report to `reporting`: never coalesced. */
  report(report: DeliveryReport): Promise<string>
  /**
   * The buy reached completed, canceled or rejected: queued impairments are made due first, then the `final`
   * delivery report is queued as an outbox barrier, sent only once every earlier event of the buy to the same
   * URL is delivered or has failed, whatever the worker concurrency, however many senders share the outbox
   * (events to other URLs, such as a push URL answering errors, never delay it); then nothing more fires. The outbox keeps the buy closed (also without a reporting registration), so events
   * after a restart are refused too. Resolves with the final report's key (undefined without a reporting
   * registration); throws `webhook_after_final` when the buy was closed already.
   */
  finish(
    status: 'completed' | 'canceled' | 'rejected',
    finalReport: DeliveryReport,
  ): Promise<string | undefined>
}

/** The seller-side webhook sender. */
export interface WebhookSender {
  /**
   * Builds the payload for the registration's channel, serialises it once, stores it durably in the outbox
   * and resolves with its idempotency key (a fresh UUID v4, sent unchanged on every retry).
   */
  notify(registration: WebhookRegistration, event: TaskEvent, options?: NotifyOptions): Promise<string>
  /**
   * An event-specific payload to one `notification_configs[]` subscriber (creative status and assignment
   * changes, account status changes, capabilities.changed, ...): serialised once, stored in the outbox and
   * delivered like any entry (RFC 9421, or the legacy HMAC-SHA256 / Bearer scheme the config registered),
   * retried under the same idempotency key. Resolves with the key.
   */
  notify(
    registration: SubscriberRegistration,
    event: SubscriberEvent,
    options?: NotifyOptions,
  ): Promise<string>
  /** Webhooks of a task, by its status changes. */
  task(registration: WebhookRegistration, init: TaskWebhooksInit): TaskWebhooks
  /** Webhooks of a media buy: impairments, delivery reports and the final report. */
  mediaBuy(init: MediaBuyWebhooksInit): MediaBuyWebhooks
  /** webhook_activity of a destination, newest first. */
  activity(destination: string, limit?: number): Promise<ActivityEntry[]>
  /**
   * `core/webhook-activity-record.json` rows of a destination for `owner`: each attempt of each fire noted for
   * that owner in the fire log, newest first (nothing without a `fireLog`).
   */
  webhookActivity(destination: string, owner: string, limit?: number): Promise<Record<string, unknown>[]>
  /** Starts the background worker (idempotent). */
  start(): void
  /** Stops the worker and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
  /**
   * Looks for due entries now rather than at the next poll: call it after a transaction that enqueued commits
   * (an enqueue inside a caller's transaction is not visible to the worker until then).
   */
  wake(): void
  /** Attempts every entry due now, once each, and waits for all of them (for tests and scripts). */
  drain(): Promise<void>
}
