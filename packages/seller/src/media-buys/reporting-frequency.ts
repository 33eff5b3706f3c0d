/**
 * A reporting_webhook's `reporting_frequency` "must be supported by all products in the media buy"
 * (core/reporting-webhook.json): each product lists what it supports in
 * `reporting_capabilities.available_reporting_frequencies`; a frequency one of them lacks is refused.
 */
import { AgentError } from '@adwire/agent-server'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The frequencies every one of `products` supports. */
function commonFrequencies(products: readonly Record<string, unknown>[]): string[] | undefined {
  let common: string[] | undefined
  for (const product of products) {
    const capabilities = isObject(product.reporting_capabilities) ? product.reporting_capabilities : {}
    const listed = Array.isArray(capabilities.available_reporting_frequencies)
      ? capabilities.available_reporting_frequencies.map(String)
      : []
    common = common === undefined ? listed : common.filter((frequency) => listed.includes(frequency))
  }
  return common
}

/**
 * Throws UNSUPPORTED_FEATURE when `webhook` asks for a reporting frequency one of the buy's products does not
 * support.
 *
 * @example
 * assertReportingFrequency({ reporting_frequency: 'hourly' }, [product]) // throws when product lists only daily
 */
export function assertReportingFrequency(
  webhook: unknown,
  products: readonly Record<string, unknown>[],
): void {
  if (!isObject(webhook) || typeof webhook.reporting_frequency !== 'string') return
  const supported = commonFrequencies(products) ?? []
  if (supported.includes(webhook.reporting_frequency)) return
  throw new AgentError(
    'UNSUPPORTED_FEATURE',
    `reporting_frequency ${webhook.reporting_frequency} is not supported by every product of the buy; they support ${supported.length > 0 ? supported.join(', ') : 'no common frequency'}`,
    {
      field: 'reporting_webhook.reporting_frequency',
      status: 400,
      recovery: 'correctable',
      details: { supported_frequencies: supported },
    },
  )
}
