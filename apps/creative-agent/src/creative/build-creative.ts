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
import { fixedSize, standardCatalog, type CatalogFormat } from './catalog.js'
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

export interface BuiltManifest {
  format_id: { agent_url: string; id: string }
  assets: Record<string, AssetValue>
  brand?: unknown
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
  const domain = request.brand?.domain ?? request.creative_manifest?.brand?.domain
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
  const content = /cta|call_to_action/.test(id)
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

function generate(
  format: CatalogFormat,
  look: Look & { landing?: string },
  index: number | undefined,
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
      case 'text':
        assets[slot.asset_id] = { asset_type: 'text', content: textFor(slot, look), language: 'en' }
        break
      case 'url':
        if (slot.asset_id !== 'click_url' && !slot.required) break
        if (!look.landing) {
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

function transform(
  format: CatalogFormat,
  source: Record<string, unknown>,
  look: Look,
  index: number | undefined,
): Record<string, AssetValue> {
  const sources = Object.entries(source).flatMap(([id, value]) =>
    (Array.isArray(value) ? value : [value])
      .filter(isObject)
      .map((asset) => [id, asset as AssetValue] as const),
  )
  const byType = (type: string, id: string) =>
    sources.find(([key, asset]) => key === id && asset.asset_type === type)?.[1] ??
    sources.find(([, asset]) => asset.asset_type === type)?.[1]
  const clickUrl = sources.find(
    ([key, asset]) =>
      asset.asset_type === 'url' && (key === 'click_url' || asset.url_type === 'clickthrough'),
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
      asset =
        slot.asset_id === 'click_url'
          ? clickUrl
          : sources.find(([key, a]) => key === slot.asset_id && a.asset_type === 'url')?.[1]
    } else {
      asset = byType(slot.asset_type, slot.asset_id)
    }
    if (!asset && slot.asset_type === 'html') {
      const image = byType('image', 'image')
      if (image && typeof image.url === 'string') {
        asset = {
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
    }
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

/** The build_creative task. */
export async function buildCreative(
  input: unknown,
  context: CreativeContext,
): Promise<BuildCreativeResponse> {
  const { request, offerings } = parse(input)
  const catalog = context.catalog ?? standardCatalog(context.agentUrl)
  const targets = request.target_format_ids ?? [request.target_format_id!]
  const multi = request.target_format_ids !== undefined
  const formats = targets.map((target, index) => {
    const format = catalog.get(target)
    if (!format) {
      throw new CreativeError(
        'FORMAT_NOT_SUPPORTED',
        `format ${target.id} of ${target.agent_url} is not supported by this agent; list_creative_formats shows what is`,
        { field: targetField(multi ? index : undefined) },
      )
    }
    return format
  })

  if (request.mode === 'estimate') {
    return {
      status: 'completed',
      mode: 'estimate',
      estimate: {
        currency: 'USD',
        cost_low: 0,
        cost_high: 0,
        basis: 'fixed',
        items_to_produce: formats.length,
      },
      ...echoContext(input),
    }
  }

  const manifest = request.creative_manifest
  const sourceAssets = (manifest?.assets ?? {}) as Record<string, unknown>
  const briefAsset = isObject(sourceAssets.promoted_offerings) ? sourceAssets.promoted_offerings : undefined
  const generating = offerings !== undefined || briefAsset !== undefined || manifest === undefined
  if (!generating && manifest?.format_id) {
    // A complete manifest in one of our formats must meet that format before we transform it.
    const sourceFormat = catalog.get(manifest.format_id)
    const issue = sourceFormat ? manifestIssues(sourceFormat, sourceAssets)[0] : undefined
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
  const look = lookFrom(request, offerings)

  const built: BuiltManifest[] = formats.map((format, index) => {
    const assets = generating
      ? generate(format, look, multi ? index : undefined)
      : transform(format, sourceAssets, look, multi ? index : undefined)
    return {
      format_id: { ...format.format_id },
      assets,
      ...(manifest?.brand ? { brand: manifest.brand } : request.brand ? { brand: request.brand } : {}),
    }
  })

  const preview = request.include_preview
    ? previewManifests(
        built.map((creative) => ({ manifest: creative, format: catalog.get(creative.format_id)! })),
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
