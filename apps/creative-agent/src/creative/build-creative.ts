/**
 * build_creative: generation from a brief (a manifest whose `promoted_offerings` asset carries a brand manifest
 * and inline offerings) into a complete manifest for the target format, or transformation of a complete manifest
 * into another format. Deterministic: the same request gives the same response bytes.
 */
import { createHash } from 'node:crypto'
import type { BuildCreativeRequest } from '@adwire/schemas'
import { normalizeAgentUrl, standardCatalog, type CatalogFormat, type FormatCatalog } from '@adwire/formats'
import { findCapability, type CanonicalKind } from './canonical.js'
import type { CreativeContext } from './context.js'
import { CreativeError, echoContext } from './errors.js'
import { manifestIssues, slotsOf, type AssetValue } from './manifest.js'
import { previewManifests, type PreviewBlock } from './preview-creative.js'
import { generate } from './build-generate.js'
import { isObject, lookFrom, parse, targetField } from './build-request.js'
import { derive, sourcesOf, transform } from './build-transform.js'

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

const ENVELOPE = new Set([
  'idempotency_key',
  'context',
  'context_id',
  'push_notification_config',
  'governance_context',
])

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
    const field = targetField(multi ? index : undefined)
    const ours = normalizeAgentUrl(target.agent_url) === normalizeAgentUrl(catalog.agentUrl)
    throw new CreativeError(
      'FORMAT_NOT_SUPPORTED',
      ours
        ? `format ${target.id} is not supported by this agent; list_creative_formats shows its formats and get_adcp_capabilities its creative.supported_formats capability_ids`
        : `format ${target.id} of ${target.agent_url} is not this agent's: its formats have agent_url ${catalog.agentUrl} (send {"agent_url": "${catalog.agentUrl}", "id": "${target.id}"}); list_creative_formats shows them`,
      {
        field,
        details: { expected_agent_url: catalog.agentUrl, received_agent_url: target.agent_url },
      },
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
