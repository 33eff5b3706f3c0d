/** How a stored media buy is shown: create/update responses and get_media_buys entries (official shapes). */
import { availableActionsOf, validActionsOf } from './actions.js'
import type { MediaBuyRecord, PackageRecord } from './types.js'

/** A package as core/package.json. */
export function packageView(pkg: PackageRecord, currency?: string): Record<string, unknown> {
  return {
    package_id: pkg.package_id,
    product_id: pkg.product_id,
    budget: pkg.budget,
    ...(currency ? { currency } : {}),
    pricing_option_id: pkg.pricing_option_id,
    ...(pkg.bid_price !== undefined ? { bid_price: pkg.bid_price } : {}),
    ...(pkg.pacing ? { pacing: pkg.pacing } : {}),
    ...(pkg.impressions !== undefined ? { impressions: pkg.impressions } : {}),
    ...(pkg.format_ids ? { format_ids: pkg.format_ids } : {}),
    ...(pkg.targeting_overlay ? { targeting_overlay: pkg.targeting_overlay } : {}),
    creative_assignments: pkg.creative_assignments,
    ...(pkg.start_time ? { start_time: pkg.start_time } : {}),
    ...(pkg.end_time ? { end_time: pkg.end_time } : {}),
    paused: pkg.paused,
    canceled: pkg.canceled,
    ...(pkg.context ? { context: pkg.context } : {}),
  }
}

/** The `account` member (core/account.json's required fields). */
const accountView = (buy: MediaBuyRecord) => ({
  account_id: buy.account_id,
  name: String((buy.brand as { domain?: string } | undefined)?.domain ?? buy.account_id),
  status: 'active',
  ...(buy.sandbox ? { sandbox: true } : {}),
})

/** The create_media_buy success response. */
export function createResponse(buy: MediaBuyRecord, revision: number): Record<string, unknown> {
  return {
    media_buy_id: buy.media_buy_id,
    account: accountView(buy),
    media_buy_status: buy.status,
    // The deprecated top-level status mirrors the task status ('completed' is also a media-buy status).
    status: 'completed',
    confirmed_at: buy.confirmed_at,
    revision,
    currency: buy.currency,
    total_budget: buy.total_budget,
    valid_actions: validActionsOf(buy),
    available_actions: availableActionsOf(buy),
    packages: buy.packages.map((pkg) => {
      const { currency: _omit, ...view } = packageView(pkg)
      return view
    }),
    ...(buy.sandbox ? { sandbox: true } : {}),
  }
}

/** A get_media_buys entry. */
export function buyView(
  buy: MediaBuyRecord,
  revision: number,
  options: { now: string; webhookActivity?: Record<string, unknown>[]; history?: number },
): Record<string, unknown> {
  return {
    media_buy_id: buy.media_buy_id,
    account: accountView(buy),
    status: buy.status,
    status_as_of: options.now,
    health: buy.impairments.length > 0 ? 'impaired' : 'ok',
    impairments: buy.impairments,
    ...(buy.rejection_reason ? { rejection_reason: buy.rejection_reason } : {}),
    currency: buy.currency,
    total_budget: buy.total_budget,
    start_time: buy.start_time,
    end_time: buy.end_time,
    confirmed_at: buy.confirmed_at,
    ...(buy.cancellation ? { cancellation: buy.cancellation } : {}),
    revision,
    created_at: buy.created_at,
    updated_at: buy.updated_at,
    ...(buy.context ? { context: buy.context } : {}),
    valid_actions: validActionsOf(buy),
    available_actions: availableActionsOf(buy),
    ...(options.webhookActivity ? { webhook_activity: options.webhookActivity } : {}),
    ...(options.history
      ? {
          history: buy.history
            .slice(-options.history)
            .reverse()
            .map((entry, index) => ({
              revision: Math.max(1, revision - index),
              timestamp: entry.at,
              actor: entry.actor,
              action: entry.status === 'canceled' ? 'canceled' : 'updated',
              summary: entry.note ?? `status ${entry.status}`,
            })),
        }
      : {}),
    packages: buy.packages.map((pkg) => packageView(pkg, buy.currency)),
  }
}
