/**
 * webhook_activity: every fire the sales agent makes on a persistent channel (a buy's delivery reports and
 * impairments, an account's creative events, an agent's capabilities.changed) is noted in a fire log (one
 * record per idempotency key: what was sent, where, for whom); the sender's outbox records each attempt. A
 * read joins the two into `core/webhook-activity-record.json` rows, one per attempt, newest first, only for
 * the principal the fire was made for.
 */
import type { ActivityEntry, WebhookSender } from '@adwire/webhooks'
import type { RecordStore } from '../storage/types.js'

/** The record kind of the fire log. */
export const FIRE_KIND = 'webhook_fire'

/** One logical fire (its retries share the key). */
export interface FireRecord {
  readonly idempotency_key: string
  /** The outbox destination whose attempts are this fire's. */
  readonly destination: string
  /** `enums/notification-type.json`, verbatim from the payload. */
  readonly notification_type: string
  readonly sequence_number?: number
  /** The registered URL (stripped of query and fragment when read). */
  readonly url: string
  readonly payload_size_bytes?: number
  readonly subscriber_id?: string
  readonly media_buy_id?: string
  /** Unix seconds the fire was accepted. */
  readonly fired_at: number
}

/** Notes a fire, owned by the principal it was made for. */
export async function recordFire(records: RecordStore, owner: string, fire: FireRecord): Promise<void> {
  await records.put(FIRE_KIND, fire.idempotency_key, owner, fire)
}

/** The URL as webhook_activity may show it: no query string, no fragment, no credentials. */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return url.split(/[?#]/)[0] ?? url
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString()

/** One `core/webhook-activity-record.json` row of an attempt of a fire. */
export function activityRecord(fire: FireRecord, attempt: ActivityEntry): Record<string, unknown> {
  const pending = attempt.status === 'pending'
  return {
    idempotency_key: fire.idempotency_key,
    ...(fire.subscriber_id !== undefined ? { subscriber_id: fire.subscriber_id } : {}),
    // The outbox notes an attempt when its outcome is known: the attempt began no later than that.
    fired_at: iso(Math.max(fire.fired_at, attempt.at)),
    completed_at: pending ? null : iso(attempt.at),
    notification_type: fire.notification_type,
    ...(fire.sequence_number !== undefined ? { sequence_number: fire.sequence_number } : {}),
    attempt: Math.max(1, attempt.attempt),
    status: attempt.status,
    url: redactedUrl(fire.url),
    http_status_code: pending ? null : attempt.http_status_code,
    ...(fire.payload_size_bytes !== undefined ? { payload_size_bytes: fire.payload_size_bytes } : {}),
    error_message: attempt.status === 'success' ? null : (attempt.error_message?.slice(0, 500) ?? null),
    ...(fire.media_buy_id !== undefined ? { ext: { media_buy_id: fire.media_buy_id } } : {}),
  }
}

/**
 * The webhook_activity rows of one destination for `owner`: every attempt of every fire noted for that owner,
 * newest first, at most `limit`. Attempts of fires made for someone else are never shown.
 */
export async function webhookActivity(
  records: RecordStore,
  sender: WebhookSender,
  destination: string,
  owner: string,
  limit = 50,
): Promise<Record<string, unknown>[]> {
  const attempts = await sender.activity(destination, limit * 4)
  const fires = new Map<string, FireRecord | undefined>()
  const rows: Record<string, unknown>[] = []
  for (const attempt of attempts) {
    if (!fires.has(attempt.idempotency_key)) {
      const stored = await records.get<FireRecord>(FIRE_KIND, attempt.idempotency_key)
      fires.set(
        attempt.idempotency_key,
        stored && stored.owner === owner && stored.body.destination === destination ? stored.body : undefined,
      )
    }
    const fire = fires.get(attempt.idempotency_key)
    if (fire) rows.push(activityRecord(fire, attempt))
    if (rows.length >= limit) break
  }
  return rows
}
