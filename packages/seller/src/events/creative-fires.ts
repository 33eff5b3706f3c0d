/**
 * The account-level creative events: `creative.status_changed` for a transition the seller or its systems made
 * (the transitions `creative/creative-status-changed-webhook.json` allows; a buyer's own archive or resubmit
 * fires nothing) and `creative.purged` for a soft or hard purge, each to the creative's account's
 * notification_configs that subscribed to it.
 */
import { ACCOUNT_KIND } from '../accounts/resolve.js'
import type { AccountRecord } from '../accounts/types.js'
import type { CreativeRecord } from '../creatives/types.js'
import type { RecordStore } from '../storage/types.js'
import type { notificationFires } from './notification-fires.js'

/** Seller-initiated transitions the schema allows, with the reason each one reports. */
const TRANSITIONS: Record<string, Record<string, string>> = {
  processing: { pending_review: 'review_passed', rejected: 'processing_failure' },
  pending_review: { approved: 'review_passed', rejected: 'review_failure' },
  approved: {
    pending_review: 'seller_rereview',
    suspended: 'policy_revocation',
    rejected: 'policy_revocation',
    archived: 'seller_archive',
  },
  suspended: { approved: 'review_passed', rejected: 'policy_revocation' },
}

/** `enums/creative-event-reason-code.json` values a purge may carry. */
const PURGE_REASONS = new Set([
  'retention_expired',
  'legal_erasure',
  'takedown_request',
  'advertiser_request',
  'account_closed',
  'source_deleted',
])

const safeId = (value: string) => value.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 200)
const iso = (seconds: number) => new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z')
const isoOf = (value: string | undefined, fallback: number) =>
  value && !Number.isNaN(Date.parse(value)) ? iso(Date.parse(value) / 1000) : iso(fallback)

export function creativeFires(options: {
  readonly records: RecordStore
  readonly fires: ReturnType<typeof notificationFires>
  readonly now: () => number
}) {
  const { records, fires, now } = options
  const accountOf = async (creative: CreativeRecord) =>
    creative.account_id
      ? (await records.get<AccountRecord>(ACCOUNT_KIND, creative.account_id))?.body
      : undefined

  return {
    /** Fires creative.status_changed when the transition is one the seller reports; resolves with the keys. */
    async statusChanged(creative: CreativeRecord, from: string | undefined): Promise<string[]> {
      const reason = from ? TRANSITIONS[from]?.[creative.status] : undefined
      const account = await accountOf(creative)
      if (!reason || !account) return []
      const observedAt = isoOf(creative.updated_at, now())
      return fires.fire(
        account.owner,
        `account:${account.account_id}`,
        account.notification_configs,
        'creative.status_changed',
        {
          notification_id: safeId(
            `cs_${creative.creative_id}_${creative.status}_${Date.parse(observedAt) / 1000}`,
          ),
          account_id: account.account_id,
          creative_id: creative.creative_id,
          transition: { from, to: creative.status, observed_at: observedAt },
          reason_code: reason,
          ...(creative.rejection_reason ? { reason_detail: creative.rejection_reason.slice(0, 500) } : {}),
          initiator: from === 'processing' ? 'system' : 'seller',
        },
      )
    },

    /** Fires creative.purged (never coalesced); resolves with the keys. */
    async purged(creative: CreativeRecord, kind: 'soft' | 'hard'): Promise<string[]> {
      const account = await accountOf(creative)
      if (!account) return []
      return fires.fire(
        account.owner,
        `account:${account.account_id}`,
        account.notification_configs,
        'creative.purged',
        {
          notification_id: safeId(`cp_${creative.creative_id}`),
          account_id: account.account_id,
          creative_id: creative.creative_id,
          purge_kind: kind,
          purged_at: isoOf(creative.purged_at, now()),
          reason_code: PURGE_REASONS.has(String(creative.purge_reason_code))
            ? creative.purge_reason_code
            : kind === 'hard'
              ? 'legal_erasure'
              : 'retention_expired',
          initiator: 'seller',
        },
      )
    },
  }
}
