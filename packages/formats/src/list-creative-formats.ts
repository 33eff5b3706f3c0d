/** list_creative_formats: the catalog, filtered as the 3.1.19 request allows, paginated with an opaque cursor. */
import { createHash } from 'node:crypto'
import {
  ListCreativeFormatsRequestSchema,
  parseFormatId,
  parseShape,
  type ListCreativeFormatsRequest,
} from '@adwire/schemas'
import { standardCatalog, type CatalogFormat, type FormatCatalog } from './catalog.js'
import { FormatsError, parseOrThrow } from './errors.js'
import { matchesFilters } from './filters.js'

/** Formats per page when the request sets no `pagination.max_results`. */
export const DEFAULT_PAGE_SIZE = 50
/** The largest `pagination.max_results` the request schema accepts. */
export const MAX_PAGE_SIZE = 100

/** Another creative agent an agent points buyers at (`creative_agents` in the list_creative_formats response). */
export interface CreativeAgentRef {
  agent_url: string
  agent_name?: string
  capabilities?: ('validation' | 'assembly' | 'generation' | 'preview' | 'delivery')[]
}

/** What {@link listCreativeFormats} lists from, besides the request. */
export interface ListCreativeFormatsOptions {
  /** The serving agent's URL: the standard catalog's format_ids name it. */
  readonly agentUrl: string
  /** The formats served; the standard catalog for `agentUrl` when omitted. */
  readonly catalog?: FormatCatalog
  /** Other creative agents to list in `creative_agents` (omitted from the response when empty). */
  readonly creativeAgents?: readonly CreativeAgentRef[]
}

/** The success arm of `creative/list-creative-formats-response.json`. */
export interface ListCreativeFormatsResponse {
  status: 'completed'
  formats: CatalogFormat[]
  creative_agents?: CreativeAgentRef[]
  pagination: { has_more: boolean; cursor?: string; total_count: number }
  context?: Record<string, unknown>
}

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
  throw new FormatsError(
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
          throw new FormatsError('INVALID_FORMAT_ID', (error as Error).message, {
            field: `${key}[${index}]`,
          })
        }
      }
    })
  }
}

/**
 * The list_creative_formats task (AdCP 3.1.19 `creative/list-creative-formats-request.json`): validates the raw
 * request, filters the catalog (every filter of the request schema), and answers one page with an opaque cursor
 * bound to the filters, `total_count`, the configured `creative_agents` and the request's `context` echoed.
 * Throws a {@link FormatsError}: INVALID_REQUEST (not an object, schema violation with its `field`, a cursor not
 * issued for these filters) or INVALID_FORMAT_ID (a bare-string format_id).
 *
 * @example
 * const page = await listCreativeFormats(
 *   { type: 'display', max_width: 320, pagination: { max_results: 10 } },
 *   { agentUrl: 'https://creative.example' },
 * )
 * page.formats.map((format) => format.format_id.id) // ['display_320x50_image', ...]
 * if (page.pagination.has_more) {
 *   const next = await listCreativeFormats(
 *     { type: 'display', max_width: 320, pagination: { max_results: 10, cursor: page.pagination.cursor } },
 *     { agentUrl: 'https://creative.example' },
 *   )
 * }
 */
export async function listCreativeFormats(
  input: unknown,
  options: ListCreativeFormatsOptions,
): Promise<ListCreativeFormatsResponse> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new FormatsError('INVALID_REQUEST', 'the request must be a JSON object')
  }
  checkFormatIds(input as Record<string, unknown>)
  const request: ListCreativeFormatsRequest = parseOrThrow(() =>
    parseShape(ListCreativeFormatsRequestSchema, input, 'list_creative_formats request'),
  )
  const catalog = options.catalog ?? standardCatalog(options.agentUrl)
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
    ...(options.creativeAgents && options.creativeAgents.length > 0
      ? { creative_agents: options.creativeAgents.map((agent) => ({ ...agent })) }
      : {}),
    pagination: {
      has_more: hasMore,
      ...(hasMore ? { cursor: encodeCursor(offset + page.length, filter) } : {}),
      total_count: matching.length,
    },
    ...echoContext(input),
  }
}

/** `{context}` copied unchanged from the raw request, or nothing when the request carried none. */
function echoContext(input: unknown): { context?: Record<string, unknown> } {
  if (typeof input === 'object' && input !== null && 'context' in input) {
    const context = (input as { context?: unknown }).context
    if (typeof context === 'object' && context !== null && !Array.isArray(context)) {
      return { context: context as Record<string, unknown> }
    }
  }
  return {}
}
