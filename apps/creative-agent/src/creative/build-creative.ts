/**
 * build_creative: generation from a brief (a manifest whose `promoted_offerings` asset carries a brand manifest
 * and inline offerings) into a complete manifest for the target format, or transformation of a complete manifest
 * into another format. Deterministic: the same request gives the same response bytes.
 */
import { createHash } from 'node:crypto'
import { z } from 'zod'
import {
  BuildCreativeRequestSchema,
  parseFormatId,
  parseShape,
  type BuildCreativeRequest,
} from '@adwire/schemas'
import { renderedAudioAsset } from './audio.js'
import { findCapability, type CanonicalKind } from './canonical.js'
import { fixedSize, standardCatalog, type CatalogFormat, type FormatCatalog } from './catalog.js'
import type { CreativeContext } from './context.js'
import { CreativeError, echoContext } from './errors.js'
import { checkAsset, manifestIssues, slotsOf, type AssetValue, type Slot } from './manifest.js'
import { previewManifests, type PreviewBlock } from './preview-creative.js'
import {
  bannerHtml,
  bannerSvg,
  fittedSvg,
  logoSvg,
  normalizeHex,
  svgDataUrl,
  truncate,
  type Look,
} from './render.js'

/** A built manifest: a named format (`format_id`) or, built from a capability, a canonical one (`format_kind`). */
export interface BuiltManifest {
  format_id?: { agent_url: string; id: string }
  format_kind?: CanonicalKind
  assets: Record<string, AssetValue>
  brand?: unknown
}

/** What one target of a build resolves to: the format to fill, and the canonical kind for a capability. */
interface Target {
  format: CatalogFormat
  kind?: CanonicalKind
}

export type BuildCreativeResponse =
  | {
      status: 'completed'
      creative_manifest: BuiltManifest
      build_variant_id: string
      recipe_hash: string
      preview?: PreviewBlock
      context?: Record<string, unknown>
    }
  | {
      status: 'completed'
      creative_manifests: BuiltManifest[]
      preview?: PreviewBlock
      context?: Record<string, unknown>
    }
  | {
      status: 'completed'
      mode: 'estimate'
      estimate: {
        currency: string
        cost_low: number
        cost_high: number
        basis: 'fixed'
        items_to_produce: number
      }
      context?: Record<string, unknown>
    }

/** The brief as the service spec writes it: `promoted_offerings: {brand_manifest, inline_offerings}`. */
const PromotedOfferingsSchema = z
  .object({
    brand_manifest: z
      .object({
        name: z.string().optional(),
        url: z.string().optional(),
        colors: z
          .object({ primary: z.string().optional(), secondary: z.string().optional() })
          .loose()
          .optional(),
        tagline: z.string().optional(),
      })
      .loose()
      .optional(),
    inline_offerings: z
      .array(
        z
          .object({ name: z.string(), description: z.string().optional(), url: z.string().optional() })
          .loose(),
      )
      .optional(),
    messaging: z.object({ headline: z.string().optional(), cta: z.string().optional() }).loose().optional(),
    name: z.string().optional(),
  })
  .loose()
type PromotedOfferings = z.infer<typeof PromotedOfferingsSchema>

const OFFERINGS_FIELD = 'creative_manifest.assets.promoted_offerings'
const ENVELOPE = new Set([
  'idempotency_key',
  'context',
  'context_id',
  'push_notification_config',
  'governance_context',
])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** JSON with sorted keys: the recipe hash does not depend on key order. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${stableJson(value[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

function formatIdOrThrow(value: unknown, field: string): void {
  try {
    parseFormatId(value)
  } catch (error) {
    throw new CreativeError('INVALID_FORMAT_ID', (error as Error).message, { field })
  }
}

interface Parsed {
  request: BuildCreativeRequest
  offerings: PromotedOfferings | undefined
}

/** Validates the raw input: format_ids first (INVALID_FORMAT_ID), then the brief, then the whole request. */
function parse(input: unknown): Parsed {
  if (!isObject(input)) throw new CreativeError('INVALID_REQUEST', 'the request must be a JSON object')
  const hasOne = input.target_format_id !== undefined
  const hasMany = input.target_format_ids !== undefined
  if (hasOne && hasMany) {
    throw new CreativeError('INVALID_REQUEST', 'give target_format_id or target_format_ids, not both', {
      field: 'target_format_ids',
    })
  }
  if (!hasOne && !hasMany) {
    throw new CreativeError('INVALID_REQUEST', 'target_format_id (or target_format_ids) is required', {
      field: 'target_format_id',
    })
  }
  if (input.target_format_id !== undefined) formatIdOrThrow(input.target_format_id, 'target_format_id')
  if (Array.isArray(input.target_format_ids)) {
    input.target_format_ids.forEach((value, index) => formatIdOrThrow(value, `target_format_ids[${index}]`))
  }
  // Keys holding undefined (never on the wire) would count as present for the schema's `required` checks.
  let body: Record<string, unknown> = Object.fromEntries(
    Object.entries(input).filter(([, value]) => value !== undefined),
  )
  let offerings: PromotedOfferings | undefined
  const manifest = input.creative_manifest
  if (isObject(manifest)) {
    if (manifest.format_id !== undefined) formatIdOrThrow(manifest.format_id, 'creative_manifest.format_id')
    const assets = isObject(manifest.assets) ? manifest.assets : undefined
    const raw = assets?.promoted_offerings
    if (raw !== undefined) {
      const result = PromotedOfferingsSchema.safeParse(raw)
      if (!result.success || !isObject(raw)) {
        throw new CreativeError(
          'INVALID_REQUEST',
          'promoted_offerings must hold brand_manifest and inline_offerings',
          {
            field: OFFERINGS_FIELD,
          },
        )
      }
      offerings = result.data
      // The spec's brief form has no asset_type (3.1.19's asset union has no such asset); the brief-asset form
      // (`asset_type: "brief"`) is valid as is. Either way the brief is read here, not by the manifest schema.
      const { promoted_offerings: _brief, ...rest } = assets!
      const target =
        input.target_format_id ??
        (Array.isArray(input.target_format_ids) ? input.target_format_ids[0] : undefined)
      body = {
        ...body,
        creative_manifest: {
          ...manifest,
          assets: raw.asset_type === 'brief' ? assets : rest,
          ...(manifest.format_id === undefined && manifest.format_kind === undefined && target !== undefined
            ? { format_id: target }
            : {}),
        },
      }
    }
  }
  let request: BuildCreativeRequest
  try {
    request = parseShape(BuildCreativeRequestSchema, body, 'build_creative request')
  } catch (error) {
    throw CreativeError.from(error)
  }
  return { request, offerings }
}

/** The brand domain of a natural-key account reference (`account: {brand: {domain}, operator}`), if any. */
function accountBrandDomain(request: BuildCreativeRequest): string | undefined {
  const account: unknown = (request as { account?: unknown }).account
  const brand = isObject(account) ? account.brand : undefined
  return isObject(brand) && typeof brand.domain === 'string' ? brand.domain : undefined
}

/** The look of a generated creative: brand colours and offering text from the brief, request and manifest. */
function lookFrom(
  request: BuildCreativeRequest,
  offerings: PromotedOfferings | undefined,
): Look & { landing?: string } {
  const brandManifest = offerings?.brand_manifest
  const kit = (request.brand ?? request.creative_manifest?.brand)?.brand_kit_override
  const colour = (value: unknown, field: string, fallback: string) => {
    if (value === undefined) return fallback
    const hex = normalizeHex(value)
    if (!hex) {
      throw new CreativeError('VALIDATION_ERROR', `${field} must be a hex colour such as #1a73e8`, { field })
    }
    return hex
  }
  const primary = colour(
    brandManifest?.colors?.primary ?? kit?.colors?.primary,
    brandManifest?.colors?.primary !== undefined
      ? `${OFFERINGS_FIELD}.brand_manifest.colors.primary`
      : 'brand.brand_kit_override.colors.primary',
    '#1a3c6e',
  )
  const secondary = colour(
    brandManifest?.colors?.secondary ?? kit?.colors?.secondary,
    brandManifest?.colors?.secondary !== undefined
      ? `${OFFERINGS_FIELD}.brand_manifest.colors.secondary`
      : 'brand.brand_kit_override.colors.secondary',
    '#ffd23f',
  )
  const domain =
    request.brand?.domain ?? request.creative_manifest?.brand?.domain ?? accountBrandDomain(request)
  const brandName = brandManifest?.name ?? domain ?? 'Brand'
  const offering = offerings?.inline_offerings?.[0]
  const headline =
    offerings?.messaging?.headline ?? offering?.name ?? brandManifest?.tagline ?? request.message ?? brandName
  const body = offering?.description ?? brandManifest?.tagline ?? request.message ?? ''
  const landing = offering?.url ?? brandManifest?.url ?? (domain ? `https://${domain}/` : undefined)
  return {
    primary,
    secondary,
    brandName,
    headline,
    body,
    cta: offerings?.messaging?.cta ?? 'Learn more',
    ...(landing ? { landing } : {}),
  }
}

/** The pixel size an image slot needs: its fixed requirement, else its aspect ratio at 1200px, else the render. */
function imageSize(slot: Slot, format: CatalogFormat): { width: number; height: number } {
  const req = slot.requirements ?? {}
  if (
    typeof req.min_width === 'number' &&
    req.min_width === req.max_width &&
    typeof req.min_height === 'number' &&
    req.min_height === req.max_height
  ) {
    return { width: req.min_width, height: req.min_height }
  }
  if (typeof req.aspect_ratio === 'string') {
    const [w, h] = req.aspect_ratio.split(':').map(Number) as [number, number]
    const width = Math.max(1200, typeof req.min_width === 'number' ? req.min_width : 0)
    return { width, height: Math.round((width * h) / w) }
  }
  return fixedSize(format) ?? { width: 1200, height: 628 }
}

function textFor(slot: Slot, look: Look): string {
  const max = typeof slot.requirements?.max_length === 'number' ? slot.requirements.max_length : undefined
  const id = slot.asset_id
  const content = /script/.test(id)
    ? spokenScript(look)
    : /cta|call_to_action/.test(id)
      ? look.cta
      : /sponsor|advertiser|brand/.test(id)
        ? look.brandName
        : /body|description/.test(id)
          ? look.body || look.headline
          : look.headline
  return truncate(content, max)
}

const targetField = (index: number | undefined) =>
  index === undefined ? 'target_format_id' : `target_format_ids[${index}]`

/** The words of an audio spot written from the brief: headline, then body. */
function spokenScript(look: Look): string {
  const headline = look.headline.trim()
  const body = look.body.trim()
  if (!body || body === headline) return headline
  return `${headline}${/[.!?]$/.test(headline) ? '' : '.'} ${body}`
}

/** Whether a slot carries the clickthrough (a v1 `click_url` or the canonical `landing_page_url`). */
const isClickSlot = (slot: Slot): boolean =>
  slot.asset_type === 'url' &&
  (slot.asset_id === 'click_url' ||
    slot.asset_id === 'landing_page_url' ||
    slot.asset_role === 'clickthrough')

/** Whether a slot is a production input naming the voice of an audio spot. */
const isVoiceSlot = (slot: Slot): boolean => slot.asset_type === 'text' && /voice/.test(slot.asset_id)

/** The duration an audio slot asks for: the middle of its accepted range, or 30 s. */
function audioDuration(slot: Slot): number {
  const req = slot.requirements ?? {}
  const min = typeof req.min_duration_ms === 'number' ? req.min_duration_ms : undefined
  const max = typeof req.max_duration_ms === 'number' ? req.max_duration_ms : undefined
  if (min !== undefined && max !== undefined) return Math.round((min + max) / 2)
  return max ?? min ?? 30_000
}

function generate(
  format: CatalogFormat,
  look: Look & { landing?: string },
  index: number | undefined,
  agentUrl: string,
): Record<string, AssetValue> {
  const assets: Record<string, AssetValue> = {}
  const size = fixedSize(format)
  for (const slot of slotsOf(format)) {
    switch (slot.asset_type) {
      case 'image': {
        const { width, height } = imageSize(slot, format)
        const svg =
          slot.asset_id === 'logo' ? logoSvg(Math.min(width, height), look) : bannerSvg(width, height, look)
        assets[slot.asset_id] = {
          asset_type: 'image',
          url: svgDataUrl(svg),
          width: slot.asset_id === 'logo' ? Math.min(width, height) : width,
          height: slot.asset_id === 'logo' ? Math.min(width, height) : height,
          format: 'svg',
          alt_text: `${look.brandName}: ${look.headline}`,
        }
        break
      }
      case 'html':
        assets[slot.asset_id] = {
          asset_type: 'html',
          content: bannerHtml(size, look, look.landing ?? '{CLICK_URL}'),
          version: '5',
          accessibility: { alt_text: `${look.brandName}: ${look.headline}`, keyboard_navigable: true },
        }
        break
      case 'audio':
        assets[slot.asset_id] = renderedAudioAsset(agentUrl, spokenScript(look), '', audioDuration(slot))
        break
      case 'text':
        // A voice is the buyer's choice; the default rendition needs none.
        if (isVoiceSlot(slot)) break
        assets[slot.asset_id] = { asset_type: 'text', content: textFor(slot, look), language: 'en' }
        break
      case 'url':
        if (!isClickSlot(slot) && !slot.required) break
        if (!look.landing) {
          if (!slot.required) break
          throw new CreativeError(
            'VALIDATION_ERROR',
            `format ${format.format_id.id} needs a ${slot.asset_id} asset: give brand_manifest.url, an offering url or brand.domain`,
            { field: `creative_manifest.assets.${slot.asset_id}` },
          )
        }
        assets[slot.asset_id] = { asset_type: 'url', url: look.landing, url_type: 'clickthrough' }
        break
      default:
        if (slot.required) {
          throw new CreativeError(
            'FORMAT_NOT_SUPPORTED',
            `this agent cannot generate ${slot.asset_type} assets, which ${format.format_id.id} requires; send a complete manifest to transform instead`,
            { field: targetField(index) },
          )
        }
    }
  }
  return assets
}

type Sources = readonly (readonly [string, AssetValue])[]

/** The text of the source asset under `key` (or a key containing it), if any. */
function sourceText(sources: Sources, pattern: RegExp): string | undefined {
  const found = sources.find(
    ([key, asset]) => pattern.test(key) && asset.asset_type === 'text' && typeof asset.content === 'string',
  )
  return found ? String(found[1].content) : undefined
}

/** The look with the source manifest's own copy (headline, body, call to action) where it has some. */
function sourceLook<L extends Look>(look: L, sources: Sources): L {
  const headline = sourceText(sources, /^(headline|title)$/)
  const body = sourceText(sources, /^(body|body_text|description)$/)
  const cta = sourceText(sources, /^(cta|call_to_action)$/)
  return {
    ...look,
    ...(headline ? { headline } : {}),
    ...(body ? { body } : headline ? { body: '' } : {}),
    ...(cta ? { cta } : {}),
  }
}

/**
 * What a slot missing from a source manifest can be made from: an HTML serving tag from an image, an audio spot
 * from a script. Undefined when nothing in the manifest makes it.
 */
function derive(
  slot: Slot,
  sources: Sources,
  format: CatalogFormat,
  look: Look,
  clickUrl: AssetValue | undefined,
  agentUrl: string,
): AssetValue | undefined {
  if (slot.asset_type === 'html') {
    const image = sources.find(([, asset]) => asset.asset_type === 'image')?.[1]
    if (!image || typeof image.url !== 'string') return undefined
    return {
      asset_type: 'html',
      content: bannerHtml(
        fixedSize(format),
        look,
        typeof clickUrl?.url === 'string' ? clickUrl.url : '{CLICK_URL}',
        image.url,
      ),
      version: '5',
    }
  }
  if (slot.asset_type === 'audio') {
    const script = sourceText(sources, /script/)
    if (!script?.trim()) return undefined
    const voice = sourceText(sources, /voice/) ?? ''
    return renderedAudioAsset(agentUrl, script, voice, audioDuration(slot))
  }
  return undefined
}

/** The asset entries of a manifest's `assets` map (arrays flattened), keyed by their slot key. */
function sourcesOf(source: Record<string, unknown>): Sources {
  return Object.entries(source).flatMap(([id, value]) =>
    (Array.isArray(value) ? value : [value])
      .filter(isObject)
      .map((asset) => [id, asset as AssetValue] as const),
  )
}

function transform(
  format: CatalogFormat,
  source: Record<string, unknown>,
  baseLook: Look,
  index: number | undefined,
  agentUrl: string,
): Record<string, AssetValue> {
  const sources = sourcesOf(source)
  const look = sourceLook(baseLook, sources)
  // By slot key first; another key of the same type only fills a required slot (never an optional one, so a
  // headline does not turn into a call to action).
  const byType = (slot: Slot) =>
    sources.find(([key, asset]) => key === slot.asset_id && asset.asset_type === slot.asset_type)?.[1] ??
    (slot.required || slot.asset_type !== 'text'
      ? sources.find(([, asset]) => asset.asset_type === slot.asset_type)?.[1]
      : undefined)
  const clickUrl = sources.find(
    ([key, asset]) =>
      asset.asset_type === 'url' &&
      (key === 'click_url' || key === 'landing_page_url' || asset.url_type === 'clickthrough'),
  )?.[1]
  const assets: Record<string, AssetValue> = {}
  const fail = (slot: Slot, message: string): never => {
    throw new CreativeError(
      'VALIDATION_ERROR',
      `asset ${slot.asset_id} for ${format.format_id.id}: ${message}`,
      {
        field: `creative_manifest.assets.${slot.asset_id}`,
        details: { target: targetField(index), asset_id: slot.asset_id },
      },
    )
  }
  for (const slot of slotsOf(format)) {
    let asset: AssetValue | undefined
    if (slot.asset_type === 'url') {
      asset = isClickSlot(slot)
        ? clickUrl
        : sources.find(([key, a]) => key === slot.asset_id && a.asset_type === 'url')?.[1]
    } else {
      asset = byType(slot)
    }
    asset ??= derive(slot, sources, format, look, clickUrl, agentUrl)
    if (!asset) {
      if (slot.required) fail(slot, `the manifest has no ${slot.asset_type} asset to make it from`)
      continue
    }
    if (asset.asset_type === 'image') {
      const { width, height } = imageSize(slot, format)
      if (asset.width !== width || asset.height !== height) {
        asset = {
          asset_type: 'image',
          url: svgDataUrl(
            fittedSvg(
              width,
              height,
              String(asset.url),
              look.primary,
              String(asset.alt_text ?? look.headline),
            ),
          ),
          width,
          height,
          format: 'svg',
          ...(typeof asset.alt_text === 'string' ? { alt_text: asset.alt_text } : {}),
        }
      }
    } else if (asset.asset_type === 'text' && typeof asset.content === 'string') {
      const max = typeof slot.requirements?.max_length === 'number' ? slot.requirements.max_length : undefined
      asset = { ...asset, content: truncate(asset.content, max) }
    }
    const problem = checkAsset(slot, asset)
    if (problem) fail(slot, problem)
    assets[slot.asset_id] = asset
  }
  return assets
}

/**
 * The formats the request's targets select: a catalog format by its id, or a canonical build capability by its
 * capability_id (advertised in get_adcp_capabilities `creative.supported_formats`). FORMAT_NOT_SUPPORTED (with
 * `field`) for a target that is neither.
 */
function targetFormats(request: BuildCreativeRequest, catalog: FormatCatalog): Target[] {
  const targets = request.target_format_ids ?? [request.target_format_id!]
  const multi = request.target_format_ids !== undefined
  return targets.map((target, index) => {
    const format = catalog.get(target)
    if (format) return { format }
    const capability = findCapability(catalog, target)
    if (capability) return { format: capability.working, kind: capability.format_kind }
    throw new CreativeError(
      'FORMAT_NOT_SUPPORTED',
      `format ${target.id} of ${target.agent_url} is not supported by this agent; list_creative_formats shows its formats and get_adcp_capabilities its creative.supported_formats capability_ids`,
      { field: targetField(multi ? index : undefined) },
    )
  })
}

/**
 * Checks a build_creative request without building anything: throws the CreativeError that
 * {@link buildCreative} would raise before generating (INVALID_FORMAT_ID, INVALID_REQUEST, an unsupported
 * target). A server runs it before its idempotency lookup, so a malformed request is never a replay or a
 * conflict.
 *
 * @example
 * checkBuildCreativeRequest({ idempotency_key, target_format_id: 'display_300x250' }, context) // throws INVALID_FORMAT_ID
 */
export function checkBuildCreativeRequest(input: unknown, context: CreativeContext): void {
  const { request } = parse(input)
  targetFormats(request, context.catalog ?? standardCatalog(context.agentUrl))
}

/** The build_creative task. */
export async function buildCreative(
  input: unknown,
  context: CreativeContext,
): Promise<BuildCreativeResponse> {
  const { request, offerings } = parse(input)
  const catalog = context.catalog ?? standardCatalog(context.agentUrl)
  const multi = request.target_format_ids !== undefined
  const targets = targetFormats(request, catalog)

  if (request.mode === 'estimate') {
    return {
      status: 'completed',
      mode: 'estimate',
      estimate: {
        currency: 'USD',
        cost_low: 0,
        cost_high: 0,
        basis: 'fixed',
        items_to_produce: targets.length,
      },
      ...echoContext(input),
    }
  }

  const manifest = request.creative_manifest
  const sourceAssets = (manifest?.assets ?? {}) as Record<string, unknown>
  const briefAsset = isObject(sourceAssets.promoted_offerings) ? sourceAssets.promoted_offerings : undefined
  const generating = offerings !== undefined || briefAsset !== undefined || manifest === undefined
  const look = lookFrom(request, offerings)
  if (!generating && manifest?.format_id) {
    // A complete manifest in one of our formats must meet that format before we transform it; a required asset
    // it lacks but carries the makings of (a serving tag from its image, a spot from its script) is built.
    const sourceFormat = catalog.get(manifest.format_id)
    const sources = sourcesOf(sourceAssets)
    const derivable = (assetId: string): boolean => {
      const slot = sourceFormat && slotsOf(sourceFormat).find((candidate) => candidate.asset_id === assetId)
      return (
        slot !== undefined &&
        sourceAssets[assetId] === undefined &&
        derive(slot, sources, sourceFormat!, look, undefined, context.agentUrl) !== undefined
      )
    }
    const issue = sourceFormat
      ? manifestIssues(sourceFormat, sourceAssets).find((candidate) => !derivable(candidate.asset_id))
      : undefined
    if (issue) {
      throw new CreativeError(
        'VALIDATION_ERROR',
        `asset ${issue.asset_id} for ${sourceFormat!.format_id.id}: ${issue.message}`,
        {
          field: `creative_manifest.assets.${issue.asset_id}`,
        },
      )
    }
  }
  if (!generating && Object.keys(sourceAssets).length === 0) {
    throw new CreativeError(
      'VALIDATION_ERROR',
      'the manifest has no assets and no promoted_offerings brief',
      {
        field: 'creative_manifest.assets',
      },
    )
  }

  const built: BuiltManifest[] = targets.map(({ format, kind }, index) => {
    const assets = generating
      ? generate(format, look, multi ? index : undefined, context.agentUrl)
      : transform(format, sourceAssets, look, multi ? index : undefined, context.agentUrl)
    return {
      // A capability build is a 3.1 canonical manifest: format_kind, never a named format_id.
      ...(kind ? { format_kind: kind } : { format_id: { ...format.format_id } }),
      assets,
      ...(manifest?.brand ? { brand: manifest.brand } : request.brand ? { brand: request.brand } : {}),
    }
  })

  const preview = request.include_preview
    ? previewManifests(
        built.map((creative, index) => ({ manifest: creative, format: targets[index]!.format })),
        request.preview_inputs,
        request.preview_output_format ?? 'url',
        context,
        multi,
      )
    : undefined

  if (multi)
    return {
      status: 'completed',
      creative_manifests: built,
      ...(preview ? { preview } : {}),
      ...echoContext(input),
    }
  const recipe = stableJson(
    Object.fromEntries(
      Object.entries(input as Record<string, unknown>).filter(([key]) => !ENVELOPE.has(key)),
    ),
  )
  const recipeHash = sha256(recipe)
  return {
    status: 'completed',
    creative_manifest: built[0]!,
    build_variant_id: `bv_${recipeHash.slice(0, 24)}`,
    recipe_hash: `sha256:${recipeHash}`,
    ...(preview ? { preview } : {}),
    ...echoContext(input),
  }
}
