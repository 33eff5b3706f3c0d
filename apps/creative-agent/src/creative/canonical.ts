/**
 * The 3.1 canonical-formats path of the creative agent: the build capabilities advertised in
 * `get_adcp_capabilities` `creative.supported_formats[]` (each `{capability_id, format: ProductFormatDeclaration}`,
 * `core/product-format-declaration.json`), and how build_creative builds one.
 *
 * Every capability narrows one v1 catalog format (named in `v1_format_ref`): a `display_{w}x{h}_image` format
 * becomes an `image` capability `image_{w}x{h}`, an `audio_{n}s` spot an `audio_hosted` capability
 * `audio_hosted_{n}s`. build_creative targets one with `target_format_id: {agent_url, id: capability_id}` and
 * fills its {@link BuildCapability.working} format, whose slots are the v1 slots keyed by the canonical
 * `asset_group_id` (`image_main`, `landing_page_url`, `audio_main`, …); the manifest it returns carries
 * `format_kind` and no `format_id` (`core/creative-manifest.json`, 3.1+ arm).
 *
 * Dimensions are logical pixels at pixel ratio 1 (no `pixel_ratios` is declared, so an image_main must match
 * width x height exactly; conformance vector `canonical-image-pixel-ratio.json` "backward-compatible-1x").
 */
import { normalizeAgentUrl, type CatalogFormat, type FormatCatalog } from '@adwire/formats'
import type { Slot } from './manifest.js'
import { slotsOf } from './manifest.js'

/** The canonical format kinds this agent builds. */
export type CanonicalKind = 'image' | 'audio_hosted'

/** A slot of a canonical declaration (`formats/canonical/_base.json` `slots[]`). */
export interface CanonicalSlot {
  asset_group_id: string
  asset_type: string
  required: boolean
  max_chars?: number
  max_size_kb?: number
  consumed_for_production?: boolean
  description?: string
}

/** One entry of `creative.supported_formats[]`. */
export interface SupportedFormatEntry {
  capability_id: string
  format: {
    format_kind: CanonicalKind
    display_name: string
    v1_format_ref: { agent_url: string; id: string }[]
    params: Record<string, unknown> & { slots: CanonicalSlot[] }
  }
}

/** A build capability: its wire entry, and the format build_creative fills for it. */
export interface BuildCapability {
  readonly capability_id: string
  readonly format_kind: CanonicalKind
  /** The v1 catalog format the capability narrows. */
  readonly v1: CatalogFormat
  /** The v1 format with its slots keyed by the canonical asset_group_id (what the built manifest holds). */
  readonly working: CatalogFormat
  readonly entry: SupportedFormatEntry
}

/** A canonical slot with the v1 slot it is filled like (by asset_id), if any. */
interface SlotPlan {
  slot: CanonicalSlot
  from?: string
  /** Requirements for a slot the v1 format lacks (a text length). */
  requirements?: Record<string, unknown>
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** The v1 slot's requirements, with canonical slot-level limits (max_size_kb, max_chars) read from them. */
function planSlots(
  v1: CatalogFormat,
  plans: readonly SlotPlan[],
): { slots: CanonicalSlot[]; working: Slot[] } {
  const byId = new Map(slotsOf(v1).map((slot) => [slot.asset_id, slot]))
  const slots: CanonicalSlot[] = []
  const working: Slot[] = []
  for (const plan of plans) {
    const source = plan.from ? byId.get(plan.from) : undefined
    if (plan.from && !source) continue
    const requirements = source?.requirements ?? plan.requirements
    const maxSize = num(requirements?.max_file_size_kb)
    const maxChars = num(requirements?.max_length)
    slots.push({
      ...plan.slot,
      ...(maxSize !== undefined && ['image', 'video', 'audio', 'zip'].includes(plan.slot.asset_type)
        ? { max_size_kb: maxSize }
        : {}),
      ...(maxChars !== undefined && plan.slot.asset_type === 'text' ? { max_chars: maxChars } : {}),
    })
    working.push({
      ...(source ?? {}),
      item_type: 'individual',
      asset_id: plan.slot.asset_group_id,
      asset_type: plan.slot.asset_type,
      required: plan.slot.required,
      asset_group_id: plan.slot.asset_group_id,
      ...(requirements ? { requirements } : {}),
    })
  }
  return { slots, working }
}

function capability(
  v1: CatalogFormat,
  capabilityId: string,
  kind: CanonicalKind,
  plans: readonly SlotPlan[],
  params: Record<string, unknown>,
): BuildCapability {
  const { slots, working } = planSlots(v1, plans)
  return {
    capability_id: capabilityId,
    format_kind: kind,
    v1,
    working: { ...v1, assets: working } as CatalogFormat,
    entry: {
      capability_id: capabilityId,
      format: {
        format_kind: kind,
        display_name: v1.name,
        v1_format_ref: [{ ...v1.format_id }],
        params: { ...params, slots },
      },
    },
  }
}

const IMAGE = /^display_(\d+)x(\d+)_image$/
const AUDIO = /^audio_(\d+)s$/

function imageCapability(v1: CatalogFormat, width: number, height: number): BuildCapability {
  const image = slotsOf(v1).find((slot) => slot.asset_id === 'image')
  const formats = image?.requirements?.formats
  return capability(
    v1,
    `image_${width}x${height}`,
    'image',
    [
      {
        slot: { asset_group_id: 'image_main', asset_type: 'image', required: true },
        from: 'image',
      },
      {
        slot: { asset_group_id: 'headline', asset_type: 'text', required: false },
        requirements: { max_length: height <= 90 ? 50 : 90 },
      },
      {
        slot: { asset_group_id: 'cta', asset_type: 'text', required: false },
        requirements: { max_length: 20 },
      },
      {
        slot: { asset_group_id: 'landing_page_url', asset_type: 'url', required: true },
        from: 'click_url',
      },
    ],
    {
      width,
      height,
      ...(Array.isArray(formats) ? { image_formats: formats } : {}),
      ssl_required: true,
      headline_max_chars: height <= 90 ? 50 : 90,
      asset_source: 'seller_pre_rendered_from_brief',
      buyer_asset_acceptance: 'accepted',
      composition_model: 'deterministic',
    },
  )
}

function audioCapability(v1: CatalogFormat, seconds: number): BuildCapability {
  const audio = slotsOf(v1).find((slot) => slot.asset_id === 'audio')
  const req = audio?.requirements ?? {}
  return capability(
    v1,
    `audio_hosted_${seconds}s`,
    'audio_hosted',
    [
      {
        slot: { asset_group_id: 'audio_main', asset_type: 'audio', required: true },
        from: 'audio',
      },
      {
        slot: {
          asset_group_id: 'script',
          asset_type: 'text',
          required: false,
          consumed_for_production: true,
          description: 'The words of the spot; the agent renders audio_main from it (or from the brief).',
        },
        from: 'script',
      },
      {
        slot: {
          asset_group_id: 'voice_id',
          asset_type: 'text',
          required: false,
          consumed_for_production: true,
          description: 'A voice name; it selects the rendition of the script.',
        },
        from: 'voice',
      },
      {
        slot: { asset_group_id: 'companion_image', asset_type: 'image', required: false },
        from: 'companion_image',
      },
      {
        slot: { asset_group_id: 'landing_page_url', asset_type: 'url', required: false },
        from: 'click_url',
      },
    ],
    {
      ...(typeof req.min_duration_ms === 'number' && typeof req.max_duration_ms === 'number'
        ? { duration_ms_range: [req.min_duration_ms, req.max_duration_ms] }
        : {}),
      ...(Array.isArray(req.formats) ? { audio_codecs: req.formats } : {}),
      ...(Array.isArray(req.channels) ? { audio_channels: req.channels } : {}),
      asset_source: 'seller_pre_rendered_from_brief',
      buyer_asset_acceptance: 'accepted',
      composition_model: 'deterministic',
    },
  )
}

const cache = new WeakMap<FormatCatalog, readonly BuildCapability[]>()

/**
 * The build capabilities of a catalog, images first (so the first advertised entry is an image), in catalog
 * order. Computed once per catalog.
 * @example buildCapabilities(standardCatalog(url))[0]?.capability_id // 'image_300x250'
 */
export function buildCapabilities(catalog: FormatCatalog): readonly BuildCapability[] {
  let found = cache.get(catalog)
  if (!found) {
    const images: BuildCapability[] = []
    const audio: BuildCapability[] = []
    for (const format of catalog.formats) {
      const image = IMAGE.exec(format.format_id.id)
      if (image) images.push(imageCapability(format, Number(image[1]), Number(image[2])))
      const spot = AUDIO.exec(format.format_id.id)
      if (spot) audio.push(audioCapability(format, Number(spot[1])))
    }
    found = [...images, ...audio]
    cache.set(catalog, found)
  }
  return found
}

/** `creative.supported_formats` of get_adcp_capabilities for a catalog. */
export function supportedFormats(catalog: FormatCatalog): SupportedFormatEntry[] {
  return buildCapabilities(catalog).map((entry) => entry.entry)
}

/** The capability a target `{agent_url, id: capability_id}` selects on this agent, if any. */
export function findCapability(
  catalog: FormatCatalog,
  target: { agent_url: string; id: string },
): BuildCapability | undefined {
  if (normalizeAgentUrl(target.agent_url) !== normalizeAgentUrl(catalog.agentUrl)) return undefined
  return buildCapabilities(catalog).find((entry) => entry.capability_id === target.id)
}
