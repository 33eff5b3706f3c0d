/**
 * The webhook registrations stored on a media buy, as the sender takes them: the buy's
 * `push_notification_config` (impairments; MCP-shape envelopes with its operation_id and the create request's
 * `context`) and its `reporting_webhook` (delivery reports). Both deliver under one outbox destination per
 * buy, so the buy's webhook_activity is one read.
 */
import type { WebhookRegistration } from '@adwire/webhooks'
import type { MediaBuyRecord } from '../media-buys/types.js'

/** The outbox destination of a buy's persistent-channel fires. */
export const buyDestination = (mediaBuyId: string) => `media_buy:${mediaBuyId}`

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The fields of a registration the sender reads (the rest, such as reporting_frequency, stay on the buy). */
function config(source: Record<string, unknown>, operationId: string): Record<string, unknown> {
  return {
    url: source.url,
    operation_id: operationId,
    ...(typeof source.token === 'string' ? { token: source.token } : {}),
    ...(isObject(source.authentication) ? { authentication: source.authentication } : {}),
  }
}

/** The operation_id a buy's fires carry: the buyer's, else one fixed per buy (a reporting_webhook names none). */
export function buyOperationId(buy: MediaBuyRecord): string {
  const push = buy.push_notification_config
  return isObject(push) && typeof push.operation_id === 'string'
    ? push.operation_id
    : `media_buy_${buy.media_buy_id}`
}

/** Where the buy's impairments go, if anywhere. */
export function notificationsOf(buy: MediaBuyRecord): WebhookRegistration | undefined {
  const push = buy.push_notification_config
  if (!isObject(push) || typeof push.url !== 'string') return undefined
  return {
    channel: 'adcp',
    config: config(push, buyOperationId(buy)) as never,
    destination: buyDestination(buy.media_buy_id),
    ...(isObject(buy.context) ? { context: buy.context } : {}),
  }
}

/** Where the buy's delivery reports go, if anywhere. */
export function reportingOf(buy: MediaBuyRecord): WebhookRegistration | undefined {
  const hook = buy.reporting_webhook
  if (!isObject(hook) || typeof hook.url !== 'string') return undefined
  return {
    channel: 'adcp',
    config: config(hook, buyOperationId(buy)) as never,
    destination: buyDestination(buy.media_buy_id),
    ...(isObject(buy.context) ? { context: buy.context } : {}),
  }
}

/** Seconds between scheduled reports for a `reporting_frequency` (`core/reporting-webhook.json`). */
export function reportingPeriodSeconds(buy: MediaBuyRecord): number {
  const frequency = isObject(buy.reporting_webhook) ? buy.reporting_webhook.reporting_frequency : undefined
  if (frequency === 'hourly') return 3600
  if (frequency === 'monthly') return 30 * 86_400
  return 86_400
}
