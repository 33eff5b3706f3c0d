/**
 * Account-level and agent-level fires: event-specific payloads (`creative/creative-status-changed-webhook.json`,
 * `creative/creative-purged-webhook.json`, account.status_changed, the seed's capabilities.changed) to each
 * registered `notification_configs[]` entry whose `event_types` name the event and that is `active`, through the
 * sender's subscriber `notify` (RFC 9421, or the legacy HMAC-SHA256 / Bearer scheme the config registered;
 * retried under one idempotency key; noted in the fire log for the owner's webhook_activity).
 */
import type { WebhookSender } from '@adwire/webhooks'

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

export interface NotificationFiresOptions {
  readonly sender: WebhookSender
}

/**
 * @example
 * const fires = notificationFires({ sender })
 * await fires.fire(account.owner, `account:${id}`, account.notification_configs, 'creative.purged', { creative_id })
 */
export function notificationFires(options: NotificationFiresOptions) {
  const { sender } = options
  return {
    /** One payload per subscribed config, with the event's own members `payload`. Resolves with the keys. */
    async fire(
      owner: string,
      scope: string,
      configs: readonly unknown[] | undefined,
      eventType: string,
      payload: Record<string, unknown>,
      extra: { readonly mediaBuyId?: string } = {},
    ): Promise<string[]> {
      const keys: string[] = []
      for (const config of subscribersOf(configs, eventType)) {
        const subscriberId = config.subscriber_id as string
        keys.push(
          await sender.notify(
            {
              channel: 'subscriber',
              config: {
                url: config.url as string,
                subscriber_id: subscriberId,
                ...(isObject(config.authentication)
                  ? { authentication: config.authentication as never }
                  : {}),
              },
              destination: subscriberDestination(scope, subscriberId),
            },
            { notification_type: eventType, payload },
            { fire: { owner, ...(extra.mediaBuyId ? { media_buy_id: extra.mediaBuyId } : {}) } },
          ),
        )
      }
      return keys
    },
  }
}
