/**
 * Change Feed: cursor pull, the SSE stream, the per-agent authorization pull and its bootstrap snapshot. All
 * are member-only (an API key or a user token of an organization).
 */
import { gzipSync } from 'node:zlib'
import { createHash } from 'node:crypto'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { canonicalAgentUrl } from '../domain/names.js'
import type { AuthorizationRecord } from '../domain/types.js'
import { checkCursor, parseTypes, readFeedPage } from '../feed/query.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, errorBody, HttpError, intParam, reply, requireOrg, requirePrincipal } from './http.js'

/** At most this many streams are open at once in this process. */
export const MAX_STREAMS = 100

function authRow(row: AuthorizationRecord) {
  return {
    id: row.id,
    agent_url: row.agent_url,
    agent_url_canonical: row.agent_url_canonical,
    property_rid: null,
    property_id_slug: row.property_id,
    publisher_domain: row.publisher_domain,
    authorized_for: row.authorized_for,
    evidence: row.evidence,
    disputed: false,
    created_by: null,
    expires_at: row.effective_until,
    created_at: row.created_at,
    updated_at: row.updated_at,
    signing_keys: row.signing_keys as never,
    override_applied: false,
    override_reason: null,
  }
}

function evidenceParam(value: string | undefined): string[] {
  const evidence = (value ?? 'adagents_json')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  for (const item of evidence)
    if (!['adagents_json', 'agent_claim'].includes(item))
      throw new HttpError(400, 'invalid_parameter', `unknown evidence "${item}"`)
  return evidence
}

function includeParam(value: string | undefined): 'effective' {
  if (value === undefined || value === 'effective') return 'effective'
  if (value === 'raw') throw new HttpError(403, 'forbidden', 'include=raw is for registry administrators')
  throw new HttpError(400, 'invalid_parameter', 'include must be effective or raw')
}

/** The feed routes. */
export function feedRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps
  let streams = 0
  const since = () => new Date(deps.now() - deps.feedRetentionDays * 86_400_000).toISOString()

  app.get('/api/registry/feed', async (c) => {
    requireOrg(await requirePrincipal(c, deps))
    const page = await readFeedPage(
      repository,
      {
        ...(c.req.query('cursor') ? { cursor: c.req.query('cursor')! } : {}),
        ...(c.req.query('types') ? { types: c.req.query('types')! } : {}),
        limit: intParam(c.req.query('limit'), 'limit', 100, 1, 10_000),
      },
      { now: deps.now(), retentionDays: deps.feedRetentionDays },
    )
    return reply(c, deps, 'getRegistryFeed', page)
  })

  app.get('/api/registry/feed/stream', async (c) => {
    requireOrg(await requirePrincipal(c, deps))
    const filter = parseTypes(c.req.query('types'))
    const limit = intParam(c.req.query('limit'), 'limit', 100, 1, 10_000)
    const poll = c.req.query('poll_interval_seconds')
    const intervalSeconds = intParam(poll, 'poll_interval_seconds', 15, 1, 60)
    if (poll !== undefined && intervalSeconds < 5 && deps.validateResponses !== 'strict')
      throw new HttpError(400, 'invalid_parameter', 'poll_interval_seconds must be from 5 to 60')
    let cursor = await checkCursor(
      repository,
      c.req.query('cursor') ?? c.req.header('last-event-id') ?? undefined,
      since(),
    )
    if (streams >= MAX_STREAMS)
      throw new HttpError(
        429,
        'too_many_streams',
        `at most ${MAX_STREAMS} feed streams may be open`,
        { retryAfter: intervalSeconds, retry_after: intervalSeconds },
        { 'Retry-After': String(intervalSeconds) },
      )
    streams += 1
    const response = streamSSE(c, async (stream) => {
      let open = true
      stream.onAbort(() => {
        open = false
      })
      try {
        while (open && !deps.hub.closed) {
          const page = await readFeedPage(
            repository,
            { limit },
            {
              now: deps.now(),
              retentionDays: deps.feedRetentionDays,
              ...(filter ? { filter } : {}),
              checkedCursor: cursor,
            },
          )
          if (page.events.length > 0) {
            cursor = page.cursor ?? cursor
            await stream.writeSSE({ event: 'feed', id: page.cursor ?? '', data: JSON.stringify(page) })
            if (page.has_more) continue
          } else {
            await stream.writeSSE({
              event: 'heartbeat',
              ...(cursor ? { id: cursor } : {}),
              data: JSON.stringify({
                generated_at: page.freshness.generated_at,
                cursor: cursor ?? null,
                freshness: page.freshness,
              }),
            })
          }
          const wait = deps.hub.wait(intervalSeconds * 1000)
          stream.onAbort(() => wait.cancel())
          await wait.promise
        }
      } catch (error) {
        if (open)
          await stream
            .writeSSE({
              event: 'error',
              data: JSON.stringify(
                errorBody('feed_stream_error', String(error instanceof Error ? error.message : error)),
              ),
            })
            .catch(() => {})
      } finally {
        streams -= 1
      }
    })
    // Set after streamSSE, which writes its own `Cache-Control: no-cache` and a charset-less content type.
    response.headers.set('Cache-Control', 'no-cache, no-transform')
    response.headers.set('Content-Type', 'text/event-stream; charset=utf-8')
    response.headers.set('X-Accel-Buffering', 'no')
    return response
  })

  app.get('/api/registry/authorizations', async (c) => {
    requireOrg(await requirePrincipal(c, deps))
    const agentUrl = agentUrlParam(c.req.query('agent_url'), 'agent_url')
    const include = includeParam(c.req.query('include'))
    const evidence = evidenceParam(c.req.query('evidence'))
    const rows = evidence.includes('adagents_json')
      ? await repository.authorizations.forAgent(canonicalAgentUrl(agentUrl))
      : []
    c.header('X-Sync-Cursor', (await latestEventId(deps)) ?? '')
    return reply(c, deps, 'getAgentAuthorizations', {
      agent_url: agentUrl,
      evidence,
      include,
      rows: rows.map(authRow),
      count: rows.length,
    })
  })

  app.get('/api/registry/authorizations/snapshot', async (c) => {
    requireOrg(await requirePrincipal(c, deps))
    const include = includeParam(c.req.query('include'))
    const evidence = evidenceParam(c.req.query('evidence'))
    const cursor = (await latestEventId(deps)) ?? ''
    const etag = `"${createHash('sha256')
      .update(`${cursor}|${evidence.join(',')}|${include}`)
      .digest('hex')
      .slice(0, 32)}"`
    if (c.req.header('if-none-match') === etag)
      return c.body(null, 304, { ETag: etag, 'X-Sync-Cursor': cursor })
    const rows = evidence.includes('adagents_json') ? await repository.authorizations.all() : []
    const ndjson = rows.map((row) => JSON.stringify(authRow(row))).join('\n') + (rows.length ? '\n' : '')
    return c.body(gzipSync(ndjson), 200, {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'gzip',
      ETag: etag,
      'X-Sync-Cursor': cursor,
    })
  })

  return app
}

/** The newest event id inside retention (the feed position a snapshot corresponds to). */
async function latestEventId(deps: RegistryDeps): Promise<string | undefined> {
  const row = await deps.repository.driver.one<{ id: string | null }>(
    'SELECT MAX(event_id) AS id FROM registry_feed_events',
  )
  return row?.id ?? undefined
}
