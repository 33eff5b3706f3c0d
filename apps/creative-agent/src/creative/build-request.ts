/**
 * build_creative's request: the input checked (format ids first, then the promoted_offerings brief, then the whole
 * request against the official shape) and the look of the creative it describes (brand colours, offering text).
 */
import { parseRequest } from '@adwire/agent-server'
import { BuildCreativeRequestSchema, parseFormatId, type BuildCreativeRequest } from '@adwire/schemas'
import { z } from 'zod'
import { CreativeError, creativeRequestError } from './errors.js'
import { normalizeHex, type Look } from './render.js'

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

/** The promoted_offerings brief, as parsed. */
export type PromotedOfferings = z.infer<typeof PromotedOfferingsSchema>

const OFFERINGS_FIELD = 'creative_manifest.assets.promoted_offerings'

/** Whether a value is a plain JSON object. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function formatIdOrThrow(value: unknown, field: string): void {
  try {
    parseFormatId(value)
  } catch (error) {
    throw new CreativeError('INVALID_FORMAT_ID', (error as Error).message, { field })
  }
}

/** A checked request and its brief. */
export interface Parsed {
  request: BuildCreativeRequest
  offerings: PromotedOfferings | undefined
}

/** Validates the raw input: format_ids first (INVALID_FORMAT_ID), then the brief, then the whole request. */
export function parse(input: unknown): Parsed {
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
  const request: BuildCreativeRequest = parseRequest(
    BuildCreativeRequestSchema,
    body,
    'build_creative request',
    creativeRequestError,
  )
  return { request, offerings }
}

/** The brand domain of a natural-key account reference (`account: {brand: {domain}, operator}`), if any. */
function accountBrandDomain(request: BuildCreativeRequest): string | undefined {
  const account: unknown = (request as { account?: unknown }).account
  const brand = isObject(account) ? account.brand : undefined
  return isObject(brand) && typeof brand.domain === 'string' ? brand.domain : undefined
}

/** The look of a generated creative: brand colours and offering text from the brief, request and manifest. */
export function lookFrom(
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

/** The request field naming target `index` (a single target has none). */
export const targetField = (index: number | undefined) =>
  index === undefined ? 'target_format_id' : `target_format_ids[${index}]`
