/** The list_creative_formats filters (AdCP 3.1.19 `creative/list-creative-formats-request.json`) over one format. */
import type { ListCreativeFormatsRequest } from '@adwire/schemas'
import { fixedSize, isResponsive, normalizeAgentUrl, type CatalogFormat } from './catalog.js'

const WCAG_RANK = { A: 1, AA: 2, AAA: 3 } as const

const sameFormatId = (a: { agent_url: string; id: string }, b: { agent_url: string; id: string }) =>
  a.id === b.id && normalizeAgentUrl(a.agent_url) === normalizeAgentUrl(b.agent_url)

/**
 * Whether `format` passes every filter of `request` (all of them must hold; a list filter such as
 * `asset_types` or `format_ids` holds when any of its values matches, `disclosure_positions` when all do).
 *
 * @example
 * standardCatalog(agentUrl).formats.filter((format) => matchesFilters(format, { type: 'video' }))
 */
export function matchesFilters(format: CatalogFormat, request: ListCreativeFormatsRequest): boolean {
  if (request.format_ids && !request.format_ids.some((id) => sameFormatId(id, format.format_id))) return false
  if (request.type !== undefined && format.type !== request.type) return false
  if (request.asset_types) {
    const types = new Set((format.assets ?? []).flatMap((asset) => assetTypes(asset)))
    if (!request.asset_types.some((type) => types.has(type))) return false
  }
  const wantsSize =
    request.max_width !== undefined ||
    request.max_height !== undefined ||
    request.min_width !== undefined ||
    request.min_height !== undefined
  if (wantsSize) {
    // Size filters select fixed-size formats; responsive and dimensionless formats have no width to compare.
    const size = fixedSize(format)
    if (!size) return false
    if (request.max_width !== undefined && size.width > request.max_width) return false
    if (request.max_height !== undefined && size.height > request.max_height) return false
    if (request.min_width !== undefined && size.width < request.min_width) return false
    if (request.min_height !== undefined && size.height < request.min_height) return false
  }
  if (request.is_responsive !== undefined && isResponsive(format) !== request.is_responsive) return false
  if (request.name_search !== undefined) {
    const needle = request.name_search.trim().toLowerCase()
    if (needle && !format.name.toLowerCase().includes(needle)) return false
  }
  if (request.wcag_level !== undefined) {
    const level = format.accessibility?.wcag_level
    if (!level || WCAG_RANK[level] < WCAG_RANK[request.wcag_level]) return false
  }
  if (request.disclosure_positions) {
    const positions = new Set<string>(
      format.disclosure_capabilities
        ? format.disclosure_capabilities.map((capability) => capability.position)
        : (format.supported_disclosure_positions ?? []),
    )
    if (!request.disclosure_positions.every((position) => positions.has(position))) return false
  }
  if (request.disclosure_persistence) {
    const modes = new Set(
      (format.disclosure_capabilities ?? []).flatMap((capability) => capability.persistence),
    )
    if (!request.disclosure_persistence.every((mode) => modes.has(mode))) return false
  }
  if (request.output_format_ids) {
    const outputs = format.output_format_ids ?? []
    if (!request.output_format_ids.some((id) => outputs.some((output) => sameFormatId(id, output))))
      return false
  }
  if (request.input_format_ids) {
    const inputs = format.input_format_ids ?? []
    if (!request.input_format_ids.some((id) => inputs.some((input) => sameFormatId(id, input)))) return false
  }
  return true
}

function assetTypes(asset: unknown): string[] {
  const value = asset as { item_type?: string; asset_type?: string; assets?: { asset_type?: string }[] }
  if (value.item_type === 'repeatable_group')
    return (value.assets ?? []).flatMap((a) => (a.asset_type ? [a.asset_type] : []))
  return value.asset_type ? [value.asset_type] : []
}
