/**
 * Account-level and agent-level fires: event-specific payloads (`creative/creative-status-changed-webhook.json`,
 * `creative/creative-purged-webhook.json`, the seed's capabilities.changed) to each registered
 * `notification_configs[]` entry whose `event_types` name the event and that is `active`. The sender builds
 * only task envelopes, so these payloads are serialised here and stored in the same durable outbox, where the
 * sender's worker delivers them like any other entry: signed anew on every attempt (RFC 9421, or the legacy
 * HMAC-SHA256 / Bearer scheme the entry registered), retried with back-off under the same idempotency_key,
 * every attempt a webhook_activity row of the subscriber's destination.
 */
import type { OutboxStore } from '@adwire/webhooks'
import { recordFire } from '../activity/webhook-activity.js'
import type { RecordStore } from '../storage/types.js'

/**
 * The outbox header under which the sender's worker finds a legacy credential (never sent on the wire); the
 * form `@adwire/webhooks` stores for a registration with `authentication`.
 */
const LEGACY_AUTH_HEADER = 'x-adwire-legacy-auth'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The outbox destination of one subscriber of an account (or of an agent-level principal). */
export const subscriberDestination = (scope: string, subscriberId: string) =>
  `subscriber:${scope}:${subscriberId}`

/** The configs of `configs` that take `eventType`: listed in their event_types, not paused. */
export function subscribersOf(
  configs: readonly unknown[] | undefined,
  eventType: string,
): Record<string, unknown>[] {
  return (configs ?? []).filter(
    (config): config is Record<string, unknown> =>
      isObject(config) &&
      typeof config.url === 'string' &&
      typeof config.subscriber_id === 'string' &&
      config.active !== false &&
      Array.isArray(config.event_types) &&
      config.event_types.includes(eventType),
  )
}

function legacyHeader(config: Record<string, unknown>): Record<string, string> {
  const auth = config.authentication
  if (!isObject(auth) || !Array.isArray(auth.schemes) || typeof auth.credentials !== 'string') return {}
  const scheme = auth.schemes[0]
  if (scheme !== 'HMAC-SHA256' && scheme !== 'Bearer') return {}
  return { [LEGACY_AUTH_HEADER]: JSON.stringify({ scheme, credentials: auth.credentials }) }
}

export interface NotificationFiresOptions {
  readonly outbox: OutboxStore
  readonly records: RecordStore
  readonly now: () => number
  /** The advertised retry horizon, seconds. */
  readonly retryHorizonSeconds: number
}

/**
 * @example
 * const fires = notificationFires({ outbox, records, now, retryHorizonSeconds: 86_400 })
 * await fires.fire(account.owner, `account:${id}`, account.notification_configs, 'creative.purged', (base) => ({ ...base, creative_id }))
 */
export function notificationFires(options: NotificationFiresOptions) {
  const { outbox, records, now } = options
  return {
    /**
     * One payload per subscribed config; `build` gets the members every fire carries (idempotency_key,
     * notification_type, fired_at, subscriber_id) and adds the event's own. Resolves with the keys.
     */
    async fire(
      owner: string,
      scope: string,
      configs: readonly unknown[] | undefined,
      eventType: string,
      build: (common: Record<string, unknown>) => Record<string, unknown>,
      extra: { readonly ext?: Record<string, unknown> } = {},
    ): Promise<string[]> {
      const keys: string[] = []
      for (const config of subscribersOf(configs, eventType)) {
        const at = now()
        const idempotencyKey = crypto.randomUUID()
        const subscriberId = config.subscriber_id as string
        const body = JSON.stringify(
          build({
            idempotency_key: idempotencyKey,
            notification_type: eventType,
            fired_at: new Date(Math.floor(at) * 1000).toISOString().replace('.000Z', 'Z'),
            subscriber_id: subscriberId,
          }),
        )
        const destination = subscriberDestination(scope, subscriberId)
        await outbox.enqueue({
          id: crypto.randomUUID(),
          destination,
          url: config.url as string,
          idempotencyKey,
          body,
          headers: { 'content-type': 'application/json', ...legacyHeader(config) },
          coalesceKey: null,
          createdAt: at,
          nextAttemptAt: at,
          deadlineAt: at + options.retryHorizonSeconds,
        })
        await recordFire(records, owner, {
          idempotency_key: idempotencyKey,
          destination,
          notification_type: eventType,
          url: config.url as string,
          payload_size_bytes: Buffer.byteLength(body),
          subscriber_id: subscriberId,
          fired_at: at,
          ...(extra.ext?.media_buy_id ? { media_buy_id: String(extra.ext.media_buy_id) } : {}),
        })
        keys.push(idempotencyKey)
      }
      return keys
    },
  }
}
