/**
 * Where products come from: the seller's catalog (its adapter's products), which every caller sees, plus the products a sandbox caller
 * seeded through the test controller (records of kind `product`, owned by that caller), which only that caller
 * sees and only in its sandbox: a seeded product replaces a demo one with the same id there, and nowhere else.
 */
import { BROADCAST_WINDOWS } from '../events/measurement-windows.js'
import type { RecordStore } from '../storage/index.js'
import { firstPartyMeasurement, type CatalogProduct } from './types.js'

export const PRODUCT_KIND = 'product'

/** A seeded product as stored: the fixture made a valid core/product.json object. */
export interface SeededProduct {
  readonly product: Record<string, unknown>
}

/**
 * Whose sandbox a lookup runs in: the principal whose seeded products it sees over the demo catalog;
 * undefined, the live catalog, which no seed changes.
 */
export type SandboxOwner = string | undefined

export interface ProductSource {
  /** Every product, demo first, the sandbox owner's seeded ones after. */
  all(sandbox?: SandboxOwner): Promise<CatalogProduct[]>
  get(productId: string, sandbox?: SandboxOwner): Promise<CatalogProduct | undefined>
}

/** The record id of a product `owner` seeded (owners never collide: the id carries the owner's length). */
export const seededProductKey = (owner: string, productId: string) => `${owner.length}:${owner}/${productId}`

/** The sandbox a buy's catalog lookups run in: its owner's when the buy is on a sandbox account. */
export const buySandbox = (buy: { readonly sandbox: boolean; readonly owner: string }): SandboxOwner =>
  buy.sandbox ? buy.owner : undefined

/**
 * @example
 * const source = productSource(storage.records, 'http://127.0.0.1:4200', catalog)
 * await source.all()            // the live catalog
 * await source.all('buyer-1')   // buyer-1's sandbox: the live catalog and what buyer-1 seeded
 */
export function productSource(
  records: RecordStore,
  creativeAgentUrl: string,
  catalog: readonly CatalogProduct[],
): ProductSource {
  const demo = catalog
  const seededOf = (stored: { body: SeededProduct }): CatalogProduct => ({
    product: stored.body.product,
    custom: false,
    keywords: [],
  })
  return {
    async all(sandbox) {
      if (sandbox === undefined || sandbox === '') return [...demo]
      const seeded = (await records.list<SeededProduct>(PRODUCT_KIND, { owner: sandbox })).map(seededOf)
      const ids = new Set(seeded.map((entry) => entry.product.product_id))
      return [...demo.filter((entry) => !ids.has(entry.product.product_id)), ...seeded]
    },
    async get(productId, sandbox) {
      if (sandbox !== undefined && sandbox !== '') {
        const stored = await records.get<SeededProduct>(PRODUCT_KIND, seededProductKey(sandbox, productId))
        if (stored) return seededOf(stored)
      }
      return demo.find((entry) => entry.product.product_id === productId)
    },
  }
}

/** enums/channels.json, and what fixtures write for some of them (`video` in the media-buy storyboard). */
const CHANNELS = new Set([
  'display',
  'olv',
  'social',
  'search',
  'ctv',
  'linear_tv',
  'radio',
  'streaming_audio',
  'podcast',
  'dooh',
  'ooh',
  'print',
  'cinema',
  'email',
  'gaming',
  'retail_media',
  'influencer',
  'affiliate',
  'product_placement',
  'sponsored_intelligence',
])
const CHANNEL_ALIASES: Readonly<Record<string, string>> = {
  video: 'olv',
  audio: 'streaming_audio',
  native: 'display',
  tv: 'ctv',
}

/** A fixture's channels as official channel values (aliases mapped, unknown ones dropped). */
function channelsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined
  const mapped = value
    .map((channel) => CHANNEL_ALIASES[String(channel)] ?? String(channel))
    .filter((channel) => CHANNELS.has(channel))
  return mapped.length > 0 ? [...new Set(mapped)] : undefined
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A controller fixture (`seed_product`) as a valid product: defaults for what the fixture leaves out, format_ids
 * without agent_url pointed at the creative agent, publisher selectors without selection_type as `all`, the `default` CPM option beside those `seed_pricing_option` adds.
 */
export function productFromFixture(
  productId: string,
  fixture: Record<string, unknown>,
  creativeAgentUrl: string,
  existing?: Record<string, unknown>,
): Record<string, unknown> {
  const base: Record<string, unknown> = { ...(existing ?? {}), ...fixture }
  const channels = channelsOf(base.channels)
  const formatIds = Array.isArray(base.format_ids)
    ? base.format_ids.filter(isObject).map((formatId) => ({ agent_url: creativeAgentUrl, ...formatId }))
    : [{ agent_url: creativeAgentUrl, id: 'display_300x250_image' }]
  const pricing =
    Array.isArray(base.pricing_options) && base.pricing_options.length > 0 ? base.pricing_options : undefined
  // A selector without selection_type (get-products-pagination-integrity's fixtures) sells the whole publisher.
  const publishers: Record<string, unknown>[] =
    Array.isArray(base.publisher_properties) && base.publisher_properties.length > 0
      ? base.publisher_properties
          .filter(isObject)
          .map((entry) => (entry.selection_type === undefined ? { ...entry, selection_type: 'all' } : entry))
      : [{ publisher_domain: 'sandbox-publisher.example', selection_type: 'all' }]
  const publisherDomain = publishers.find((entry) => typeof entry.publisher_domain === 'string')
    ?.publisher_domain as string | undefined
  return {
    ...base,
    product_id: productId,
    name: typeof base.name === 'string' ? base.name : productId.replaceAll('_', ' '),
    description: typeof base.description === 'string' ? base.description : `Seeded product ${productId}`,
    publisher_properties: publishers,
    delivery_type: base.delivery_type === 'guaranteed' ? 'guaranteed' : 'non_guaranteed',
    channels: channels ?? ['display'],
    format_ids: formatIds,
    pricing_options: pricing ?? [SANDBOX_DEFAULT_PRICING],
    delivery_measurement: isObject(base.delivery_measurement)
      ? base.delivery_measurement
      : firstPartyMeasurement(publisherDomain ?? 'sandbox-publisher.example'),
    // A fixture's reporting_capabilities (often only vendor_metrics) completes the defaults: the official
    // schema requires the rest, and a product without it fails every client that checks get_products.
    reporting_capabilities: {
      available_reporting_frequencies: ['hourly', 'daily'],
      expected_delay_minutes: 60,
      timezone: 'UTC',
      supports_webhooks: true,
      available_metrics: ['impressions', 'spend', 'clicks', 'viewability'],
      date_range_support: 'date_range',
      windowed_pull_granularities: ['daily'],
      // Linear TV data matures live → C3 → C7 (window_update reports as each matures).
      ...(channels?.includes('linear_tv') ? { measurement_windows: [...BROADCAST_WINDOWS] } : {}),
      ...(isObject(base.reporting_capabilities) ? base.reporting_capabilities : {}),
    },
  }
}

/**
 * The pricing option a seeded product has until its fixture names its own: `default`, a USD CPM at 10, as in the
 * canonical compliance fixtures buyers' runners build requests from (they fall back to `default` when a
 * storyboard names a placeholder pricing option). Kept beside the options seeded later (overlay by id).
 */
export const SANDBOX_DEFAULT_PRICING = Object.freeze({
  pricing_option_id: 'default',
  pricing_model: 'cpm',
  currency: 'USD',
  fixed_price: 10,
})

/** A pricing option fixture (`seed_pricing_option`) added to (or replacing one of) a product's options. */
export function withPricingOption(
  product: Record<string, unknown>,
  pricingOptionId: string,
  fixture: Record<string, unknown>,
): Record<string, unknown> {
  const option = { pricing_model: 'cpm', currency: 'USD', ...fixture, pricing_option_id: pricingOptionId }
  const current = (Array.isArray(product.pricing_options) ? product.pricing_options : []).filter(
    (entry) => isObject(entry) && entry.pricing_option_id !== pricingOptionId,
  )
  return { ...product, pricing_options: [...current, option] }
}
