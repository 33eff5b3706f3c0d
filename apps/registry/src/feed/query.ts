/**
 * Feed pages (adcp-notes §1.4.5): events strictly after the cursor in UUIDv7 order, within the retention
 * window, optionally filtered by type (exact names or a trailing `*`); the page's cursor is its last event's
 * id, or the request's cursor when the page is empty. An unknown cursor, or one older than retention, is
 * `410 cursor_expired`; a cursor that is not a UUID is `400`.
 */
import type { RegistryRepository } from '../db/repository.js'
import type { TypeFilter } from '../db/feed.js'
import { UUID_PATTERN } from '../domain/ids.js'
import type { FeedEvent } from '../domain/types.js'
import { HttpError } from '../routes/http.js'

const TYPE_PATTERN = /^[a-z][a-z0-9_.]*(\*)?$/

/** Parses `types` (comma-separated); 400 on a malformed item. */
export function parseTypes(types: string | undefined): TypeFilter | undefined {
  if (types === undefined || types.trim() === '') return undefined
  const exact: string[] = []
  const prefixes: string[] = []
  for (const item of types
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    if (!TYPE_PATTERN.test(item))
      throw new HttpError(400, 'invalid_type_filter', `Invalid type filter: ${item}`)
    if (item.endsWith('*')) prefixes.push(item.slice(0, -1))
    else exact.push(item)
  }
  return { exact, prefixes }
}

export interface FeedPage {
  events: FeedEvent[]
  cursor: string | null
  has_more: boolean
  freshness: {
    generated_at: string
    latest_event_created_at: string | null
    lag_seconds: number | null
    retention_days: number
  }
}

export interface FeedRequest {
  readonly cursor?: string
  readonly types?: string
  readonly limit: number
}

/** Checks a cursor; resolves to its normalized form. */
export async function checkCursor(
  repository: RegistryRepository,
  cursor: string | undefined,
  since: string,
): Promise<string | undefined> {
  if (cursor === undefined || cursor === '') return undefined
  if (!UUID_PATTERN.test(cursor))
    throw new HttpError(400, 'invalid_cursor', 'cursor must be an event_id (UUID)')
  const normalized = cursor.toLowerCase()
  const event = await repository.feed.getEvent(normalized)
  if (!event || event.created_at < since) {
    throw new HttpError(
      410,
      'cursor_expired',
      'The cursor is unknown or older than the feed retention window. Re-bootstrap from the registry (resolve the publishers you follow, or /api/registry/authorizations), then tail the feed without a cursor.',
    )
  }
  return normalized
}

/** Reads one page. */
export async function readFeedPage(
  repository: RegistryRepository,
  request: FeedRequest,
  options: { now: number; retentionDays: number; filter?: TypeFilter; checkedCursor?: string | undefined },
): Promise<FeedPage> {
  const since = new Date(options.now - options.retentionDays * 86_400_000).toISOString()
  const filter = options.filter ?? parseTypes(request.types)
  const cursor =
    options.checkedCursor !== undefined
      ? options.checkedCursor
      : await checkCursor(repository, request.cursor, since)
  const rows = await repository.feed.eventsAfter({
    ...(cursor ? { after: cursor } : {}),
    since,
    ...(filter ? { filter } : {}),
    limit: request.limit + 1,
  })
  const events = rows.slice(0, request.limit)
  const latest = (await repository.feed.latestCreatedAt(since, filter)) ?? null
  const generatedAt = new Date(options.now)
  return {
    events,
    cursor: events.length > 0 ? events[events.length - 1]!.event_id : (cursor ?? null),
    has_more: rows.length > request.limit,
    freshness: {
      generated_at: generatedAt.toISOString(),
      latest_event_created_at: latest,
      lag_seconds:
        latest === null ? null : Math.max(0, Math.floor((generatedAt.getTime() - Date.parse(latest)) / 1000)),
      retention_days: options.retentionDays,
    },
  }
}
