/**
 * The demo catalog: five publishers' display, video, audio and CTV products with their pricing options, every
 * format referencing the creative agent's standard formats (format_id agent_url = the creative agent's URL).
 * Products marked `custom` are shown only to credentialed callers.
 */

import { firstPartyMeasurement, type CatalogProduct } from '@adwire/seller'

const reporting = (metrics: readonly string[]) => ({
  available_reporting_frequencies: ['hourly', 'daily'],
  expected_delay_minutes: 60,
  timezone: 'UTC',
  supports_webhooks: true,
  available_metrics: ['impressions', 'spend', 'clicks', 'ctr', 'viewability', ...metrics],
  date_range_support: 'date_range',
  windowed_pull_granularities: ['daily'],
})

/** Clearing-price percentiles of an auction over its floor (pricing-options/price-guidance.json). */
const guidance = (floor: number) => {
  const at = (factor: number) => Math.round(floor * factor * 100) / 100
  return { p25: at(1.1), p50: at(1.25), p75: at(1.5), p90: at(1.8) }
}

const cpm = (id: string, price: { fixed?: number; floor?: number }, minSpend?: number) => ({
  pricing_option_id: id,
  pricing_model: 'cpm',
  currency: 'USD',
  ...(price.fixed !== undefined ? { fixed_price: price.fixed } : {}),
  ...(price.floor !== undefined ? { floor_price: price.floor, price_guidance: guidance(price.floor) } : {}),
  ...(minSpend !== undefined ? { min_spend_per_package: minSpend } : {}),
})

interface Spec {
  id: string
  name: string
  description: string
  domain: string
  channels: string[]
  formats: string[]
  delivery: 'guaranteed' | 'non_guaranteed'
  pricing: Record<string, unknown>[]
  metrics?: string[]
  custom?: boolean
  keywords: string[]
}

const SPECS: readonly Spec[] = [
  {
    id: 'northwind_display_ros',
    name: 'Northwind News run-of-site display',
    description: 'Standard IAB display units across Northwind News: news, business and local sections.',
    domain: 'northwind-news.example',
    channels: ['display'],
    formats: ['display_300x250_image', 'display_728x90_image', 'display_320x50_image', 'display_300x250'],
    delivery: 'non_guaranteed',
    pricing: [cpm('cpm_auction', { floor: 4 }), cpm('cpm_fixed', { fixed: 9.5 })],
    keywords: ['news', 'business', 'local', 'banner', 'run of site'],
  },
  {
    id: 'summit_sports_preroll',
    name: 'Summit Sports Network pre-roll',
    description: 'Guaranteed 15s and 30s pre-roll on live and on-demand sports highlights.',
    domain: 'summitsports.example',
    channels: ['olv'],
    formats: ['video_16x9_30s', 'video_16x9_15s', 'video_vast_30s'],
    delivery: 'guaranteed',
    pricing: [
      cpm('cpm_guaranteed', { fixed: 28 }, 5000),
      { pricing_option_id: 'cpcv_guaranteed', pricing_model: 'cpcv', currency: 'USD', fixed_price: 0.06 },
    ],
    metrics: ['views', 'completed_views', 'completion_rate', 'quartile_data'],
    keywords: ['sports', 'video', 'premium', 'highlights', 'outdoor', 'preroll', 'pre-roll'],
  },
  {
    id: 'trailhead_lifestyle_display',
    name: 'Trailhead Outdoors lifestyle display',
    description: 'Display and native placements on hiking, camping and outdoor gear reviews.',
    domain: 'trailhead.example',
    channels: ['display'],
    formats: ['display_300x250_image', 'display_300x600_image', 'native_in_feed', 'display_300x250'],
    delivery: 'non_guaranteed',
    pricing: [cpm('cpm_standard', { floor: 6 }), cpm('cpm_fixed', { fixed: 11 })],
    keywords: ['outdoor', 'lifestyle', 'hiking', 'camping', 'gear', 'adventure'],
  },
  {
    id: 'harbor_audio_streaming',
    name: 'Harbor Audio streaming spots',
    description: '15s and 30s audio spots across Harbor Audio music and talk streams.',
    domain: 'harboraudio.example',
    channels: ['streaming_audio', 'podcast'],
    formats: ['audio_30s', 'audio_15s', 'audio_daast_30s'],
    delivery: 'non_guaranteed',
    pricing: [cpm('cpm_audio', { fixed: 16 })],
    metrics: ['completed_views', 'completion_rate'],
    keywords: ['audio', 'music', 'podcast', 'radio', 'streaming'],
  },
  {
    id: 'lumen_ctv_primetime',
    name: 'Lumen CTV prime-time',
    description: 'Non-skippable 30s spots on Lumen connected-TV apps, prime time, household reach.',
    domain: 'lumen-ctv.example',
    channels: ['ctv'],
    formats: ['video_ctv_30s', 'video_16x9_30s'],
    delivery: 'guaranteed',
    pricing: [cpm('cpm_ctv', { fixed: 42 }, 10000)],
    metrics: ['views', 'completed_views', 'completion_rate', 'reach', 'frequency'],
    keywords: ['ctv', 'tv', 'television', 'streaming', 'premium', 'video', 'household'],
  },
  {
    id: 'summit_sports_takeover',
    name: 'Summit Sports homepage takeover',
    description: 'A negotiated one-day homepage takeover with companion video on Summit Sports Network.',
    domain: 'summitsports.example',
    channels: ['display', 'olv'],
    formats: ['display_970x250_image', 'display_300x600_image', 'video_16x9_15s'],
    delivery: 'guaranteed',
    pricing: [
      { pricing_option_id: 'flat_takeover', pricing_model: 'flat_rate', currency: 'USD', fixed_price: 25000 },
    ],
    custom: true,
    keywords: ['sports', 'takeover', 'sponsorship', 'homepage', 'premium'],
  },
]

/**
 * The demo products, their formats at `creativeAgentUrl`.
 *
 * @example
 * demoCatalog('http://127.0.0.1:4200')[0].product.format_ids
 */
export function demoCatalog(creativeAgentUrl: string): CatalogProduct[] {
  return SPECS.map((spec) => ({
    custom: spec.custom ?? false,
    keywords: spec.keywords,
    product: {
      product_id: spec.id,
      name: spec.name,
      description: spec.description,
      publisher_properties: [{ publisher_domain: spec.domain, selection_type: 'all' }],
      channels: spec.channels,
      format_ids: spec.formats.map((id) => ({ agent_url: creativeAgentUrl, id })),
      delivery_type: spec.delivery,
      pricing_options: spec.pricing,
      reporting_capabilities: reporting(spec.metrics ?? []),
      delivery_measurement: firstPartyMeasurement(spec.domain),
      ...(spec.custom ? { is_custom: true } : {}),
    },
  }))
}
