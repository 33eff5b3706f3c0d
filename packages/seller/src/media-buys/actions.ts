/**
 * What a buyer may do to a buy: the products' `allowed_actions[]` templates (core/product-allowed-action.json)
 * resolved into the buy's `available_actions[]` (one mode each, the SLA and terms kept, entries limited to the
 * statuses they name), and enforced on update_media_buy: an action the product does not offer, offers in
 * another status, or routes through approval is ACTION_NOT_ALLOWED with `details.attempted_action` and
 * `details.reason`. A buy whose products declare no template gets the seller's default: every valid action,
 * self-serve.
 */
import { AgentError } from '@adwire/agent-server'
import { isObject } from '../seller.js'
import { availableActions as defaultActions } from './state-machine.js'
import type { MediaBuyRecord } from './types.js'

/** The template of the buy's products, first declaration of an action winning. */
export function templateOf(
  products: readonly Record<string, unknown>[],
): Record<string, unknown>[] | undefined {
  const merged = new Map<string, Record<string, unknown>>()
  for (const product of products)
    if (Array.isArray(product.allowed_actions))
      for (const entry of product.allowed_actions.filter(isObject))
        if (typeof entry.action === 'string' && !merged.has(entry.action)) merged.set(entry.action, entry)
  return merged.size > 0 ? [...merged.values()] : undefined
}

const appliesNow = (entry: Record<string, unknown>, status: string) =>
  !Array.isArray(entry.allowed_statuses) || entry.allowed_statuses.includes(status)
const modeOf = (entry: Record<string, unknown>) =>
  Array.isArray(entry.modes) && typeof entry.modes[0] === 'string' ? entry.modes[0] : 'self_serve'

/** `available_actions[]` of the buy now. */
export function availableActionsOf(buy: MediaBuyRecord): Record<string, unknown>[] {
  if (!buy.allowed_actions) return defaultActions(buy.status)
  if (['completed', 'rejected', 'canceled'].includes(buy.status)) return []
  return buy.allowed_actions
    .filter((entry) => appliesNow(entry, buy.status))
    .map((entry) => ({
      action: entry.action,
      mode: modeOf(entry),
      ...(isObject(entry.sla) ? { sla: entry.sla } : {}),
      ...(typeof entry.terms_ref === 'string' ? { terms_ref: entry.terms_ref } : {}),
    }))
}

/** `valid_actions` (deprecated flat list): the actions available now. */
export const validActionsOf = (buy: MediaBuyRecord): string[] =>
  availableActionsOf(buy).map((entry) => String(entry.action))

/** The fine-grained actions an update_media_buy request attempts on `buy`. */
export function attemptedActions(buy: MediaBuyRecord, request: Record<string, unknown>): string[] {
  const actions: string[] = []
  if (request.canceled === true) actions.push('cancel')
  if (request.paused === true) actions.push('pause')
  if (request.paused === false) actions.push('resume')
  if (typeof request.end_time === 'string') {
    const later = Date.parse(request.end_time) > Date.parse(buy.end_time)
    actions.push(later ? 'extend_flight' : 'shorten_flight')
  }
  if (request.start_time !== undefined) actions.push('update_flight_dates')
  if (Array.isArray(request.new_packages)) actions.push('add_packages')
  for (const update of Array.isArray(request.packages) ? request.packages.filter(isObject) : []) {
    const pkg = buy.packages.find((candidate) => candidate.package_id === update.package_id)
    if (pkg && typeof update.budget === 'number' && update.budget !== pkg.budget)
      actions.push(update.budget > pkg.budget ? 'increase_budget' : 'decrease_budget')
    if (update.creative_assignments !== undefined || update.creatives !== undefined)
      actions.push('update_creative_assignments')
    if (update.targeting_overlay !== undefined) actions.push('update_targeting')
    if (update.pacing !== undefined) actions.push('update_pacing')
    if (update.canceled === true) actions.push('remove_packages')
  }
  return actions
}

/** Throws ACTION_NOT_ALLOWED for the first attempted action the buy's template does not let the buyer do now. */
export function assertActionsAllowed(buy: MediaBuyRecord, request: Record<string, unknown>): void {
  if (!buy.allowed_actions) return
  for (const action of attemptedActions(buy, request)) {
    const entry = buy.allowed_actions.find((candidate) => candidate.action === action)
    const reason = !entry
      ? 'not_supported_on_product'
      : !appliesNow(entry, buy.status)
        ? 'wrong_status'
        : modeOf(entry) !== 'self_serve'
          ? 'mode_mismatch'
          : undefined
    if (reason)
      throw new AgentError(
        'ACTION_NOT_ALLOWED',
        `${action} is not available to the buyer on media buy ${buy.media_buy_id} (${reason.replaceAll('_', ' ')})`,
        {
          status: 403,
          // A product that does not offer the action at all leaves nothing to correct (available_actions).
          ...(reason === 'not_supported_on_product' ? { recovery: 'terminal' as const } : {}),
          details: {
            attempted_action: action,
            reason,
            current_status: buy.status,
            // error-details/action-not-allowed.json: the recovery option set, without a get_media_buys round-trip.
            currently_available_actions: availableActionsOf(buy),
          },
        },
      )
  }
}
