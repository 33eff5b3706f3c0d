/**
 * Package requests (media-buy/package-request.json) checked against the catalog and turned into stored
 * packages: the product must exist (PRODUCT_NOT_FOUND) and offer the pricing option (INVALID_REQUEST); the budget
 * must reach the option's minimum spend (BUDGET_TOO_LOW); an auction bid must reach the floor; requested formats
 * must be the product's; measurement terms stricter than this seller can meet are TERMS_REJECTED.
 */
import { AgentError } from '@adwire/agent-server'
import type { ProductSource, SandboxOwner } from '../catalog/product-source.js'
import { isObject, newId } from '../seller.js'
import type { PackageRecord } from './types.js'

/** The narrowest billing variance this seller guarantees, percent. */
export const MIN_VARIANCE_PERCENT = 10
const WINDOWS = new Set(['live', 'c3'])

const invalid = (code: string, message: string, field: string, status = 400) =>
  new AgentError(code, message, { field, status })

function checkMeasurementTerms(terms: unknown, field: string): void {
  if (!isObject(terms)) return
  const billing = isObject(terms.billing_measurement) ? terms.billing_measurement : undefined
  if (!billing) return
  if (typeof billing.max_variance_percent === 'number' && billing.max_variance_percent < MIN_VARIANCE_PERCENT)
    throw new AgentError(
      'TERMS_REJECTED',
      `billing variance under ${MIN_VARIANCE_PERCENT}% cannot be guaranteed; propose ${MIN_VARIANCE_PERCENT}% or more`,
      { field: `${field}.billing_measurement.max_variance_percent`, status: 422, recovery: 'correctable' },
    )
  if (typeof billing.measurement_window === 'string' && !WINDOWS.has(billing.measurement_window))
    throw new AgentError(
      'TERMS_REJECTED',
      `measurement window ${billing.measurement_window} is not offered; this seller bills on live or c3`,
      { field: `${field}.billing_measurement.measurement_window`, status: 422, recovery: 'correctable' },
    )
}

/** A validated package request as a stored package, with the currency of its pricing option (from the catalog `sandbox` sees). */
export async function packageFromRequest(
  products: ProductSource,
  request: Record<string, unknown>,
  field: string,
  sandbox: SandboxOwner,
): Promise<{ pkg: PackageRecord; currency: string; product: Record<string, unknown> }> {
  const productId = String(request.product_id)
  const entry = await products.get(productId, sandbox)
  if (!entry) throw invalid('PRODUCT_NOT_FOUND', `no product ${productId}`, `${field}.product_id`, 404)
  const product = entry.product
  const options = (product.pricing_options as Record<string, unknown>[]) ?? []
  const option = options.find((candidate) => candidate.pricing_option_id === request.pricing_option_id)
  if (!option)
    throw invalid(
      'INVALID_REQUEST',
      `product ${productId} has no pricing option ${String(request.pricing_option_id)}; it offers ${options.map((o) => String(o.pricing_option_id)).join(', ')}`,
      `${field}.pricing_option_id`,
    )
  const budget = Number(request.budget)
  if (!(budget > 0)) throw invalid('VALIDATION_ERROR', 'budget must be above 0', `${field}.budget`)
  if (typeof option.min_spend_per_package === 'number' && budget < option.min_spend_per_package)
    throw invalid(
      'BUDGET_TOO_LOW',
      `budget ${budget} is under the minimum spend of ${option.min_spend_per_package} for ${String(option.pricing_option_id)}`,
      `${field}.budget`,
    )
  const auction = typeof option.fixed_price !== 'number'
  if (auction && typeof request.bid_price === 'number' && typeof option.floor_price === 'number')
    if (request.bid_price < option.floor_price)
      throw invalid(
        'VALIDATION_ERROR',
        `bid_price ${request.bid_price} is under the floor of ${option.floor_price}`,
        `${field}.bid_price`,
      )
  if (Array.isArray(request.format_ids)) {
    const offered = (product.format_ids as Record<string, unknown>[] | undefined) ?? []
    request.format_ids.forEach((formatId, index) => {
      if (!isObject(formatId) || !offered.some((own) => own.id === formatId.id))
        throw invalid(
          'INVALID_REQUEST',
          `product ${productId} does not accept format ${isObject(formatId) ? String(formatId.id) : '?'}`,
          `${field}.format_ids[${index}]`,
        )
    })
  }
  checkMeasurementTerms(request.measurement_terms, `${field}.measurement_terms`)
  const assignments = Array.isArray(request.creative_assignments)
    ? request.creative_assignments.filter(isObject).map((assignment) => ({
        creative_id: String(assignment.creative_id),
        ...(typeof assignment.weight === 'number' ? { weight: assignment.weight } : {}),
      }))
    : []
  const inline = Array.isArray(request.creatives)
    ? request.creatives.filter(isObject).map((creative) => ({ creative_id: String(creative.creative_id) }))
    : []
  const pkg: PackageRecord = {
    package_id: newId('pkg'),
    product_id: productId,
    pricing_option_id: String(option.pricing_option_id),
    budget,
    ...(typeof request.bid_price === 'number' ? { bid_price: request.bid_price } : {}),
    ...(typeof request.pacing === 'string' ? { pacing: request.pacing } : {}),
    paused: request.paused === true,
    canceled: false,
    creative_assignments: [
      ...assignments,
      ...inline.filter((c) => !assignments.some((a) => a.creative_id === c.creative_id)),
    ],
    ...(Array.isArray(request.format_ids)
      ? { format_ids: request.format_ids as Record<string, unknown>[] }
      : {}),
    ...(isObject(request.targeting_overlay) ? { targeting_overlay: request.targeting_overlay } : {}),
    ...(typeof request.impressions === 'number' ? { impressions: request.impressions } : {}),
    ...(isObject(request.context) ? { context: request.context } : {}),
    ...(typeof request.start_time === 'string' ? { start_time: request.start_time } : {}),
    ...(typeof request.end_time === 'string' ? { end_time: request.end_time } : {}),
  }
  return { pkg, currency: String(option.currency), product }
}
