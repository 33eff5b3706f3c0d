/**
 * What the storage sweep prunes of the webhook bookkeeping: the report schedules of buys whose final report
 * was sent (nothing more fires for them: the outbox keeps them closed), and fire-log entries (what
 * webhook_activity reads) older than the retention.
 */
import { FIRE_KIND } from '../activity/webhook-activity.js'
import type { RecordStore } from '../storage/types.js'
import { SCHEDULE_KIND } from './delivery-reports.js'

/** How long fire-log entries are kept by default: 30 days. */
export const DEFAULT_FIRE_RETENTION_SECONDS = 30 * 86_400

/**
 * @example
 * await pruneWebhookRecords(storage.records, Date.now() / 1000, DEFAULT_FIRE_RETENTION_SECONDS)
 */
export async function pruneWebhookRecords(
  records: RecordStore,
  now: number,
  fireRetentionSeconds: number = DEFAULT_FIRE_RETENTION_SECONDS,
): Promise<{ schedules: number; fires: number }> {
  return {
    schedules: await records.prune(SCHEDULE_KIND, { field: 'closed', isTrue: true }),
    fires: await records.prune(FIRE_KIND, { field: 'fired_at', below: now - fireRetentionSeconds }),
  }
}
