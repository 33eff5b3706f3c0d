/**
 * notification_configs[] (core/notification-config.json) at the two levels that carry them: account level
 * (sync_accounts: creative lifecycle, product, signal and wholesale-feed events only; media-buy-anchored types
 * are refused per account) and agent level (sync_principal, sync_agent_notification_configs:
 * `capabilities.changed`). A subscriber_id appears once per set; the whole set replaces the previous one.
 */
import { isObject } from '../seller.js'

/** Event types an account-level subscriber may ask for. */
export const ACCOUNT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'creative.status_changed',
  'creative.purged',
  'product.created',
  'product.updated',
  'product.priced',
  'product.removed',
  'signal.created',
  'signal.updated',
  'signal.priced',
  'signal.removed',
  'wholesale_feed.bulk_change',
])

/** Event types an agent-level subscriber may ask for (the seed's agent-level events). */
export const AGENT_EVENT_TYPES: ReadonlySet<string> = new Set(['capabilities.changed'])

/** The first problem of a config set: its field (relative to the set's owner) and message. */
export interface ConfigProblem {
  readonly field: string
  readonly message: string
}

/**
 * @example
 * configProblem([{ subscriber_id: 'a', url: 'https://b.example/h', event_types: ['scheduled'] }], ACCOUNT_EVENT_TYPES)
 * // { field: 'notification_configs[0].event_types[0]', message: ... }
 */
export function configProblem(configs: unknown, allowed: ReadonlySet<string>): ConfigProblem | undefined {
  if (!Array.isArray(configs))
    return { field: 'notification_configs', message: 'notification_configs must be an array' }
  const seen = new Set<string>()
  for (const [index, config] of configs.entries()) {
    const at = `notification_configs[${index}]`
    if (!isObject(config)) return { field: at, message: 'each notification config must be an object' }
    if (typeof config.subscriber_id !== 'string' || config.subscriber_id === '')
      return { field: `${at}.subscriber_id`, message: 'subscriber_id is required' }
    if (seen.has(config.subscriber_id))
      return { field: `${at}.subscriber_id`, message: `subscriber_id ${config.subscriber_id} appears twice` }
    seen.add(config.subscriber_id)
    if (typeof config.url !== 'string') return { field: `${at}.url`, message: 'url is required' }
    if (!Array.isArray(config.event_types) || config.event_types.length === 0)
      return { field: `${at}.event_types`, message: 'event_types must list at least one event type' }
    for (const [position, type] of config.event_types.entries())
      if (!allowed.has(String(type)))
        return {
          field: `${at}.event_types[${position}]`,
          message: `${String(type)} is not an event this level delivers; allowed: ${[...allowed].join(', ')}`,
        }
  }
  return undefined
}

/** The stored form of a validated set: `active` made explicit (default true). */
export function normalizeConfigs(configs: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return configs.map((config) => ({ ...config, active: config.active !== false }))
}
