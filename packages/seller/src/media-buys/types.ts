/** A media buy as the sales agent stores it (one record of kind `media_buy`). */

/** `enums/media-buy-status.json`. */
export type MediaBuyStatus =
  'pending_creatives' | 'pending_start' | 'active' | 'paused' | 'completed' | 'rejected' | 'canceled'

export interface PackageRecord {
  readonly package_id: string
  readonly product_id: string
  readonly pricing_option_id: string
  budget: number
  bid_price?: number
  pacing?: string
  paused: boolean
  canceled: boolean
  creative_assignments: { creative_id: string; weight?: number; placement_ids?: string[] }[]
  format_ids?: Record<string, unknown>[]
  targeting_overlay?: Record<string, unknown>
  impressions?: number
  context?: Record<string, unknown>
  ext?: Record<string, unknown>
  start_time?: string
  end_time?: string
}

/** Delivery the test controller added (simulate_delivery, simulate_budget_spend). */
export interface SimulatedEntry {
  readonly at: number
  readonly recorded_at: number
  readonly impressions: number
  readonly clicks: number
  readonly spend: number
}

export interface MediaBuyRecord {
  readonly media_buy_id: string
  /** The principal that created it. */
  readonly owner: string
  readonly account: Record<string, unknown>
  readonly account_id: string
  readonly sandbox: boolean
  status: MediaBuyStatus
  readonly brand?: Record<string, unknown>
  currency: string
  /** Resolved flight, ISO 8601 (`asap` resolved to the creation time). */
  start_time: string
  end_time: string
  readonly created_at: string
  updated_at: string
  confirmed_at: string | null
  total_budget: number
  po_number?: string
  packages: PackageRecord[]
  /** The create request's top-level `context`, echoed by get_media_buys. */
  context?: Record<string, unknown>
  push_notification_config?: Record<string, unknown>
  reporting_webhook?: Record<string, unknown>
  artifact_webhook?: Record<string, unknown>
  /** core/impairment.json objects currently in force. */
  impairments: Record<string, unknown>[]
  history: { at: string; status: MediaBuyStatus; actor: string; note?: string }[]
  cancellation?: { canceled_at: string; canceled_by: 'buyer' | 'seller'; reason?: string }
  rejection_reason?: string
  /** Delivery added by simulate_delivery / simulate_budget_spend on top of the clock's pacing. */
  simulated?: { impressions: number; clicks: number; spend: number; conversions: number }
  /**
   * The same delivery, one entry per controller call: `at` is the instant it counts at (Unix seconds; a
   * restatement counts inside the period already reported), `recorded_at` when it was added.
   */
  simulated_log?: SimulatedEntry[]
  /** When the buy served: [from, to) Unix seconds, `to` null while it is active (the delivery clock). */
  serving: [number, number | null][]
  /** The products' allowed_actions[] template (see actions.ts); absent: the seller's default actions. */
  allowed_actions?: Record<string, unknown>[]
  /** The buyer asked for delivery to be held (update paused: true, or created paused). */
  buyer_paused: boolean
  ext?: Record<string, unknown>
}
