/** list_creative_formats: the catalog, filtered as the 3.1.19 request allows, paginated with an opaque cursor. */
import { createHash } from 'node:crypto'
import {
  ListCreativeFormatsRequestSchema,
  parseFormatId,
  parseShape,
  type ListCreativeFormatsRequest,
} from '@adwire/schemas'
import { fixedSize, isResponsive, normalizeAgentUrl, standardCatalog, type CatalogFormat } from './catalog.js'
import type { CreativeAgentRef, CreativeContext } from './context.js'
import { CreativeError, echoContext } from './errors.js'

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 100

export interface ListCreativeFormatsResponse {
  status: 'completed'
  formats: CatalogFormat[]
  creative_agents?: CreativeAgentRef[]
  pagination: { has_more: boolean; cursor?: string; total_count: number }
  context?: Record<string, unknown>
}

const WCAG_RANK = { A: 1, AA: 2, AAA: 3 } as const

/** Fields that do not select formats: excluded from the cursor's filter fingerprint. */
const NOT_FILTERS = new Set([
  'pagination',
  'context',
  'context_id',
  'ext',
  'idempotency_key',
  'push_notification_config',
  'governance_context',
  'adcp_version',
  'adcp_major_version',
  'include_pricing',
  'account',
])

const sameFormatId = (a: { agent_url: string; id: string }, b: { agent_url: string; id: string }) =>
  a.id === b.id && normalizeAgentUrl(a.agent_url) === normalizeAgentUrl(b.agent_url)

/** Whether `format` passes every filter of `request`. */
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

function fingerprint(request: Record<string, unknown>): string {
  const filters = Object.keys(request)
    .filter((key) => !NOT_FILTERS.has(key))
    .sort()
    .map((key) => [key, request[key]])
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16)
}

function encodeCursor(offset: number, filter: string): string {
  return Buffer.from(JSON.stringify({ o: offset, f: filter })).toString('base64url')
}

function decodeCursor(cursor: string, filter: string): number {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      o?: unknown
      f?: unknown
    }
    if (typeof value.o === 'number' && Number.isInteger(value.o) && value.o >= 0 && value.f === filter)
      return value.o
  } catch {
    // fall through to the error below
  }
  throw new CreativeError(
    'INVALID_REQUEST',
    'pagination.cursor is not a cursor this agent issued for these filters; start again without a cursor',
    { field: 'pagination.cursor' },
  )
}

/** Rejects bare-string format_ids with INVALID_FORMAT_ID before the general schema check. */
function checkFormatIds(input: Record<string, unknown>): void {
  for (const key of ['format_ids', 'output_format_ids', 'input_format_ids']) {
    const list = input[key]
    if (!Array.isArray(list)) continue
    list.forEach((value, index) => {
      if (typeof value === 'string' || typeof value !== 'object' || value === null) {
        try {
          parseFormatId(value)
        } catch (error) {
          throw new CreativeError('INVALID_FORMAT_ID', (error as Error).message, {
            field: `${key}[${index}]`,
          })
        }
      }
    })
  }
}

/** The list_creative_formats task. */
export async function listCreativeFormats(
  input: unknown,
  context: CreativeContext,
): Promise<ListCreativeFormatsResponse> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new CreativeError('INVALID_REQUEST', 'the request must be a JSON object')
  }
  checkFormatIds(input as Record<string, unknown>)
  let request: ListCreativeFormatsRequest
  try {
    request = parseShape(ListCreativeFormatsRequestSchema, input, 'list_creative_formats request')
  } catch (error) {
    throw CreativeError.from(error)
  }
  const catalog = context.catalog ?? standardCatalog(context.agentUrl)
  const matching = catalog.formats.filter((format) => matchesFilters(format, request))

  const pageSize = request.pagination?.max_results ?? DEFAULT_PAGE_SIZE
  const filter = fingerprint(input as Record<string, unknown>)
  const offset =
    request.pagination?.cursor !== undefined ? decodeCursor(request.pagination.cursor, filter) : 0
  const page = matching.slice(offset, offset + pageSize)
  const hasMore = offset + page.length < matching.length

  return {
    status: 'completed',
    formats: page,
    ...(context.creativeAgents && context.creativeAgents.length > 0
      ? { creative_agents: context.creativeAgents.map((agent) => ({ ...agent })) }
      : {}),
    pagination: {
      has_more: hasMore,
      ...(hasMore ? { cursor: encodeCursor(offset + page.length, filter) } : {}),
      total_count: matching.length,
    },
    ...echoContext(input),
  }
}
