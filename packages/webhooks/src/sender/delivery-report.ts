/**
 * The rules of reporting webhooks (`media-buy/media-buy-delivery-webhook-result.json`; AdCP webhooks.mdx
 * "Delivery reports"): the result is validated, a scheduled report carries `sequence_number`,
 * `reporting_period` and `currency`, `aggregated_totals` (a get_media_buy_delivery member) never appears, and
 * delivery data events carry no `notification_id`.
 */
import { MediaBuyDeliveryWebhookResultSchema, toSchemaIssues } from '@adwire/schemas'
import { WebhookError } from '../errors.js'
import type { TaskEvent } from './types.js'

/** The task_type of delivery reports. */
export const DELIVERY_TASK_TYPE = 'media_buy_delivery'

/** What the sender needs to know about a checked delivery report. */
export interface CheckedDeliveryReport {
  readonly notificationType: 'scheduled' | 'final' | 'delayed' | 'adjusted' | 'window_update'
  readonly mediaBuyIds: readonly string[]
  readonly sequenceNumber?: number
}

const invalid = (message: string) => new WebhookError('INVALID_REQUEST', message)

/**
 * Checks a delivery report event (task_type `media_buy_delivery`). Throws `INVALID_REQUEST` naming the
 * problem: a missing or invalid result, `aggregated_totals`, a scheduled report without `sequence_number`, a
 * `notification_id`, or a media buy status used as the envelope status.
 *
 * @example
 * checkDeliveryReport({ task_id, task_type: 'media_buy_delivery', status: 'completed', result })
 */
export function checkDeliveryReport(event: TaskEvent): CheckedDeliveryReport {
  const result = event.result
  if (result === undefined) throw invalid('a delivery report needs a result (the delivery data)')
  if ('aggregated_totals' in result)
    throw invalid(
      'aggregated_totals must not appear in a reporting webhook result (it exists only in get_media_buy_delivery responses)',
    )
  if (event.notification_id !== undefined)
    throw invalid('delivery reports carry no notification_id: receivers dedupe them by idempotency_key')
  if (event.status !== 'completed')
    throw invalid(
      `a delivery report's envelope status is the task status "completed", not "${String(event.status)}" (the buy's status goes in media_buy_deliveries[].status)`,
    )
  const parsed = MediaBuyDeliveryWebhookResultSchema.safeParse(result)
  if (!parsed.success) {
    const first = toSchemaIssues(parsed.error.issues)[0]
    throw invalid(
      `invalid delivery report result: ${first ? `${first.path || '(root)'}: ${first.message}` : 'schema mismatch'}`,
    )
  }
  const report = parsed.data
  if (report.notification_type === 'scheduled' && report.sequence_number === undefined)
    throw invalid('a scheduled delivery report needs a sequence_number')
  return {
    notificationType: report.notification_type,
    mediaBuyIds: report.media_buy_deliveries.map((delivery) => delivery.media_buy_id),
    ...(report.sequence_number !== undefined ? { sequenceNumber: report.sequence_number } : {}),
  }
}
