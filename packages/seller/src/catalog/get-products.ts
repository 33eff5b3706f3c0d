/**
 * get_products, tiered as the spec says: anonymous callers see standard products only, with pricing options
 * reduced to their model and currency (no prices) and standard formats; credentialed callers see the full
 * catalog with prices and custom products. The brief ranks products by the words it shares with them (products
 * sharing none are left out when any match); filters narrow by delivery type, channels, formats, fixed pricing,
 * currencies and budget; results are paged by an opaque cursor.
 */
import { AgentError } from '@adwire/agent-server'
import type { CatalogProduct } from './types.js'
import { refine } from './refine.js'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 2),
  )

/** A product's score against a brief: how many of the brief's words it carries. */
function relevance(entry: CatalogProduct, brief: Set<string>): { score: number; matched: string[] } {
  const { product } = entry
  const text = [product.name, product.description, ...(product.channels as string[]), ...entry.keywords].join(
    ' ',
  )
  const own = words(text)
  const matched = [...brief].filter((word) => own.has(word) || own.has(word.replace(/s$/, '')))
  return { score: matched.length, matched }
}

const samePrice = (option: Record<string, unknown>) => typeof option.fixed_price === 'number'

/**
 * Whether the product's `reporting_capabilities.vendor_metrics` cover every required entry (product-filters.json
 * `required_vendor_metrics`: a vendor, a metric_id or both per entry, all entries must match).
 */
function coversVendorMetrics(product: Record<string, unknown>, required: readonly unknown[]): boolean {
  const reporting = isObject(product.reporting_capabilities) ? product.reporting_capabilities : {}
  const declared = Array.isArray(reporting.vendor_metrics) ? reporting.vendor_metrics.filter(isObject) : []
  const domainOf = (vendor: unknown) =>
    isObject(vendor) ? String(vendor.domain ?? '').toLowerCase() : undefined
  return required
    .filter(isObject)
    .every((entry) =>
      declared.some(
        (metric) =>
          (entry.vendor === undefined || domainOf(entry.vendor) === domainOf(metric.vendor)) &&
          (entry.metric_id === undefined || entry.metric_id === metric.metric_id),
      ),
    )
}

function passesFilters(product: Record<string, unknown>, filters: Record<string, unknown>): boolean {
  const options = (product.pricing_options as Record<string, unknown>[]) ?? []
  if (filters.delivery_type && product.delivery_type !== filters.delivery_type) return false
  if (Array.isArray(filters.channels)) {
    const channels = (product.channels as string[] | undefined) ?? []
    if (!filters.channels.some((channel) => channels.includes(channel as string))) return false
  }
  if (Array.isArray(filters.format_ids)) {
    const formats = (product.format_ids as Record<string, unknown>[] | undefined) ?? []
    const wanted = filters.format_ids.filter(isObject)
    const norm = (url: unknown) => String(url).replace(/\/+$/, '')
    if (!formats.some((f) => wanted.some((w) => w.id === f.id && norm(w.agent_url) === norm(f.agent_url))))
      return false
  }
  // A product with both fixed and auction options matches either value.
  if (
    typeof filters.is_fixed_price === 'boolean' &&
    !options.some((option) => samePrice(option) === filters.is_fixed_price)
  )
    return false
  if (Array.isArray(filters.pricing_currencies)) {
    if (!options.some((option) => (filters.pricing_currencies as unknown[]).includes(option.currency)))
      return false
  }
  if (filters.standard_formats_only === true && product.is_custom === true) return false
  if (
    Array.isArray(filters.required_vendor_metrics) &&
    !coversVendorMetrics(product, filters.required_vendor_metrics)
  )
    return false
  if (isObject(filters.budget_range) && typeof filters.budget_range.max === 'number') {
    const minimums = options.map((option) =>
      typeof option.min_spend_per_package === 'number' ? option.min_spend_per_package : 0,
    )
    if (Math.min(...minimums) > filters.budget_range.max) return false
  }
  return true
}

/**
 * The product with only the pricing options the filters ask for: fixed or auction (`is_fixed_price`) and in
 * the buyer's currencies (`pricing_currencies`), as the spec requires of sellers.
 */
function prunedOptions(
  product: Record<string, unknown>,
  filters: Record<string, unknown>,
): Record<string, unknown> {
  let options = (product.pricing_options as Record<string, unknown>[]) ?? []
  if (typeof filters.is_fixed_price === 'boolean')
    options = options.filter((option) => samePrice(option) === filters.is_fixed_price)
  if (Array.isArray(filters.pricing_currencies))
    options = options.filter((option) => (filters.pricing_currencies as unknown[]).includes(option.currency))
  return { ...product, pricing_options: options }
}

/** A product as an anonymous caller sees it: pricing options without prices. */
function publicView(product: Record<string, unknown>): Record<string, unknown> {
  const options = (product.pricing_options as Record<string, unknown>[]).map((option) => ({
    pricing_option_id: option.pricing_option_id,
    pricing_model: option.pricing_model,
    currency: option.currency,
  }))
  return { ...product, pricing_options: options }
}

export const DEFAULT_PAGE = 50
export const MAX_PAGE = 100

/** The page size and the offset a pagination request asks for (INVALID_REQUEST for a foreign cursor). */
export function pageOf(pagination: unknown): { limit: number; offset: number } {
  const request = isObject(pagination) ? pagination : {}
  const limit = Math.min(
    typeof request.max_results === 'number' ? request.max_results : DEFAULT_PAGE,
    MAX_PAGE,
  )
  if (request.cursor === undefined) return { limit, offset: 0 }
  const decoded = Buffer.from(String(request.cursor), 'base64url').toString('utf8')
  const offset = /^o:(\d{1,9})$/.exec(decoded)?.[1]
  if (offset === undefined)
    throw new AgentError('INVALID_REQUEST', 'pagination.cursor is not a cursor this agent issued', {
      field: 'pagination.cursor',
      status: 400,
    })
  return { limit, offset: Number(offset) }
}

/** The pagination response for a page of `limit` at `offset` over `total` items. */
export function pageResponse(offset: number, limit: number, total: number): Record<string, unknown> {
  const next = offset + limit
  return {
    has_more: next < total,
    total_count: total,
    ...(next < total ? { cursor: Buffer.from(`o:${next}`, 'utf8').toString('base64url') } : {}),
  }
}

export interface GetProductsInput {
  readonly request: Record<string, unknown>
  /** Whether the caller presented credentials. */
  readonly credentialed: boolean
  readonly products: readonly CatalogProduct[]
  /** The caller acts on a sandbox account (echoed as `sandbox: true`). */
  readonly sandbox?: boolean
}

/**
 * @example
 * getProducts({ request: { buying_mode: 'brief', brief: 'sports video' }, credentialed: true, products })
 */
export function getProducts(input: GetProductsInput): Record<string, unknown> {
  const { request } = input
  const filters = isObject(request.filters) ? request.filters : {}
  let entries = input.products.filter((entry) => input.credentialed || !entry.custom)
  entries = entries.filter((entry) => passesFilters(entry.product, filters))
  const matchedWords = new Map<CatalogProduct, string[]>()
  if (request.buying_mode === 'brief' && typeof request.brief === 'string') {
    const brief = words(request.brief)
    const scored = entries.map((entry) => ({ entry, ...relevance(entry, brief) }))
    const matching = scored.filter((item) => item.score > 0)
    if (matching.length > 0) {
      matching.sort((a, b) => b.score - a.score)
      entries = matching.map((item) => item.entry)
      for (const item of matching) matchedWords.set(item.entry, item.matched)
    }
  }
  let refinementApplied: Record<string, unknown>[] | undefined
  if (request.buying_mode === 'refine' && Array.isArray(request.refine)) {
    const refined = refine(entries, request.refine)
    entries = refined.products
    refinementApplied = refined.applied
  }
  const { limit, offset } = pageOf(request.pagination)
  const page = entries.slice(offset, offset + limit).map((entry) => {
    const pruned = prunedOptions(entry.product, filters)
    const product = input.credentialed ? pruned : publicView(pruned)
    const matched = matchedWords.get(entry)
    return matched ? { ...product, brief_relevance: `Matches the brief on: ${matched.join(', ')}` } : product
  })
  return {
    products: page,
    // Prices differ by tier, so a credentialed answer is cached per account.
    cache_scope: input.credentialed ? 'account' : 'public',
    ...(refinementApplied ? { refinement_applied: refinementApplied } : {}),
    pagination: pageResponse(offset, limit, entries.length),
    ...(input.sandbox ? { sandbox: true } : {}),
  }
}
