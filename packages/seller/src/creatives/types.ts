/** A creative in the seller's library (one record of kind `creative`). */

/** `enums/creative-status.json`. */
export type CreativeStatus =
  'processing' | 'pending_review' | 'approved' | 'suspended' | 'rejected' | 'archived'

export interface CreativeRecord {
  readonly creative_id: string
  readonly owner: string
  account_id?: string
  name?: string
  format_id: Record<string, unknown>
  assets?: Record<string, unknown>
  status: CreativeStatus
  readonly created_at: string
  updated_at: string
  rejection_reason?: string
  /** Set once purged softly: the tombstone list_creatives still shows. */
  purged_at?: string
  /** The creative-event reason code of the purge. */
  purge_reason_code?: string
  tags?: string[]
}
