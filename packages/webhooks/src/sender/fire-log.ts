/**
 * The fire log behind AdCP `webhook_activity`: one record per logical fire (its retries share the key) noting
 * what was sent, where and for whom; the outbox records each attempt. A read joins the two into
 * `core/webhook-activity-record.json` rows, one per attempt, newest first, only those fired for the principal
 * asking. The sender writes the log when it enqueues (inside the caller's transaction when one is open and the
 * log's store joins it); where the records live is the caller's choice ({@link FireLogStore}).
 */
import type { ActivityEntry, OutboxStore } from '../stores.js'

/** One logical fire. */
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

/** Where the fire log is kept: a table of the caller's database, so that a fire commits with its state change. */
export interface FireLogStore {
  /** Notes a fire made for `owner` (the principal whose webhook_activity lists it). */
  put(owner: string, fire: FireRecord): Promise<void>
  get(idempotencyKey: string): Promise<{ readonly owner: string; readonly fire: FireRecord } | undefined>
}

/** What a notify notes in the fire log (with a {@link FireLogStore} configured on the sender). */
export interface FireFacts {
  /** The principal whose webhook_activity lists the fire. */
  readonly owner: string
  /** Default: the payload's `notification_type`, else the task type. */
  readonly notification_type?: string
  readonly sequence_number?: number
  readonly media_buy_id?: string
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
export async function fireActivity(
  outbox: OutboxStore,
  fires: FireLogStore,
  destination: string,
  owner: string,
  limit = 50,
): Promise<Record<string, unknown>[]> {
  const attempts = await outbox.activity(destination, limit * 4)
  const known = new Map<string, FireRecord | undefined>()
  const rows: Record<string, unknown>[] = []
  for (const attempt of attempts) {
    if (!known.has(attempt.idempotency_key)) {
      const stored = await fires.get(attempt.idempotency_key)
      known.set(
        attempt.idempotency_key,
        stored && stored.owner === owner && stored.fire.destination === destination ? stored.fire : undefined,
      )
    }
    const fire = known.get(attempt.idempotency_key)
    if (fire) rows.push(activityRecord(fire, attempt))
    if (rows.length >= limit) break
  }
  return rows
}
