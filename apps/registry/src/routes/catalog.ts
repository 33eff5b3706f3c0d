/**
 * Property Catalog: resolve identifiers to stable property handles (`POST /api/registry/resolve`, which in
 * `resolve` mode also contributes them, with the caller's provenance), browse the catalog (opaque cursor),
 * sync it since a watermark, and file and read disputes. The catalog and its link strengths are described in
 * `db/catalog.ts`.
 *
 * Sync watermark: entries come oldest change first; `server_timestamp` is the `updated_at` of the newest
 * entry returned (or `since` itself when nothing changed), so it is the server's own clock. A page never ends
 * inside a group of entries sharing one instant (the group moves to the next page whole), so passing the
 * watermark back as `since` skips nothing; `next_cursor` is that watermark when more entries are waiting,
 * else null.
 */
import { Hono } from 'hono'
import type { CatalogIdentifier, ProvenanceType, ResolveInput } from '../db/catalog.js'
import type { RegistryDeps } from '../deps.js'
import { uuidv7 } from '../domain/ids.js'
import { isHttpUrl, normalizeDomain } from '../domain/names.js'
import { HttpError, intParam, readBody, reply, requireOrg, requirePrincipal, required } from './http.js'

/** The identifier types of AdCP 3.1.19 (`enums/identifier-types.json`). */
export const IDENTIFIER_TYPES: ReadonlySet<string> = new Set([
  'domain',
  'subdomain',
  'network_id',
  'ios_bundle',
  'android_package',
  'apple_app_store_id',
  'google_play_id',
  'roku_store_id',
  'fire_tv_asin',
  'samsung_app_id',
  'apple_tv_bundle',
  'bundle_id',
  'venue_id',
  'screen_id',
  'openooh_venue_type',
  'rss_url',
  'apple_podcast_id',
  'spotify_collection_id',
  'podcast_guid',
  'station_id',
  'facility_id',
])

/**
 * Ad-serving and ad-tech domains: never properties, so resolving one answers `excluded` (`ad_infra`) and
 * creates nothing.
 */
const AD_INFRA_DOMAINS: readonly string[] = [
  'doubleclick.net',
  'googlesyndication.com',
  'googleadservices.com',
  'adnxs.com',
  'amazon-adsystem.com',
  'rubiconproject.com',
  'pubmatic.com',
  'openx.net',
  'criteo.com',
  'casalemedia.com',
  'adsrvr.org',
  'taboola.com',
  'outbrain.com',
]

const isAdInfra = (domain: string): boolean =>
  AD_INFRA_DOMAINS.some((infra) => domain === infra || domain.endsWith(`.${infra}`))

const MAX_IDENTIFIER_LENGTH = 512
const BROWSE_MAX_LIMIT = 1000
const SYNC_MAX_LIMIT = 10_000

/** The normalized identifier, or a 400 naming the offending index. */
function normalizeIdentifier(identifier: CatalogIdentifier, index: number): ResolveInput {
  const invalid = (message: string) =>
    new HttpError(400, 'invalid_identifier', `identifiers[${index}]: ${message}`, {
      details: { index, type: identifier.type },
    })
  const type = identifier.type.trim()
  if (!IDENTIFIER_TYPES.has(type)) throw invalid(`unknown identifier type ${JSON.stringify(type)}`)
  const raw = identifier.value.trim()
  if (raw === '' || raw.length > MAX_IDENTIFIER_LENGTH)
    throw invalid(`value must be 1 to ${MAX_IDENTIFIER_LENGTH} characters`)
  if (type === 'domain' || type === 'subdomain') {
    const domain = normalizeDomain(raw)
    if (!domain || raw.includes('/')) throw invalid(`${JSON.stringify(raw)} is not a domain name`)
    return { identifier: { type, value: domain }, ...(isAdInfra(domain) ? { excluded: 'ad_infra' } : {}) }
  }
  if (type === 'rss_url' && !isHttpUrl(raw)) throw invalid('an rss_url must be an http(s) URL')
  return { identifier: { type, value: raw } }
}

const isoParam = (value: string, name: string): string => {
  const parsed = Date.parse(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(parsed)) {
    throw new HttpError(400, 'invalid_parameter', `${name} must be an ISO 8601 date-time`, {
      details: { parameter: name },
    })
  }
  return new Date(parsed).toISOString()
}

const encodeCursor = (rid: string): string =>
  Buffer.from(JSON.stringify({ after: rid })).toString('base64url')

const decodeCursor = (cursor: string): string => {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown }
    if (typeof parsed.after === 'string' && parsed.after.length <= 64) return parsed.after
  } catch {
    // fall through
  }
  throw new HttpError(400, 'invalid_cursor', 'cursor is not one this registry issued', {
    details: { parameter: 'cursor' },
  })
}

const textParam = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed ? trimmed : undefined
}

/** The catalog routes. */
export function catalogRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { catalog } = deps.repository

  app.post('/api/registry/resolve', async (c) => {
    // `lookup` is a pure read for anyone; `resolve` (the default) contributes and needs a credential. The
    // mode is peeked before the body is checked, so an anonymous resolve is a 401 whatever else is wrong.
    let principal = await deps.auth.authenticate(c.req.raw)
    if (!principal) {
      let mode: unknown
      try {
        mode = (JSON.parse(await c.req.text()) as { mode?: unknown } | null)?.mode
      } catch {
        mode = undefined
      }
      if (mode !== 'lookup') principal = await requirePrincipal(c, deps)
    }
    const body = await readBody<{
      identifiers: CatalogIdentifier[]
      provenance: { type: ProvenanceType; context?: string }
      mode?: 'resolve' | 'lookup'
    }>(c, 'resolveIdentifiers', 4 * 1024 * 1024)
    const mode = body.mode ?? 'resolve'
    if (body.provenance.type === 'crawl') {
      throw new HttpError(
        400,
        'provenance_reserved',
        'provenance type crawl is reserved for the registry’s own pipelines',
        { details: { field: 'provenance.type' } },
      )
    }
    const inputs = body.identifiers.map(normalizeIdentifier)
    const orgId = mode === 'resolve' && principal ? requireOrg(principal) : undefined
    const at = new Date(deps.now()).toISOString()
    const results = await catalog.resolve(inputs, {
      mode,
      provenance: body.provenance,
      ...(orgId ? { orgId } : {}),
      at,
    })
    const summary = { total: results.length, resolved: 0, created: 0, excluded: 0, not_found: 0 }
    for (const result of results) {
      if (result.not_found) summary.not_found += 1
      else if (result.status === 'excluded') summary.excluded += 1
      else {
        summary.resolved += 1
        if (result.status === 'created') summary.created += 1
      }
    }
    return reply(c, deps, 'resolveIdentifiers', {
      resolved: results.map(({ not_found: _missing, ...entry }) => entry),
      summary,
      server_timestamp: at,
    })
  })

  app.get('/api/registry/catalog', async (c) => {
    const minResolves = c.req.query('min_resolves')
    const activeSince = textParam(c.req.query('active_since'))
    const cursor = textParam(c.req.query('cursor'))
    const limit = intParam(c.req.query('limit'), 'limit', 100, 1, BROWSE_MAX_LIMIT)
    const page = await catalog.browse({
      classification: textParam(c.req.query('classification')),
      source: textParam(c.req.query('source')),
      status: textParam(c.req.query('status')),
      identifierType: textParam(c.req.query('identifier_type')),
      search: textParam(c.req.query('search')),
      minResolves: intParam(minResolves, 'min_resolves', 0, 0, Number.MAX_SAFE_INTEGER),
      ...(activeSince ? { activeSince: isoParam(activeSince, 'active_since') } : {}),
      ...(cursor ? { after: decodeCursor(cursor) } : {}),
      limit,
    })
    const last = page.entries[page.entries.length - 1]
    return reply(c, deps, 'browseCatalog', {
      entries: page.entries.map((entry) => ({
        property_rid: entry.property_rid,
        property_id: entry.property_id,
        classification: entry.classification,
        source: entry.source,
        status: entry.status,
        identifiers: entry.identifiers,
      })),
      total: page.total,
      next_cursor: page.hasMore && last ? encodeCursor(last.property_rid) : null,
    })
  })

  app.get('/api/registry/catalog/sync', async (c) => {
    const since = isoParam(required(c.req.query('since'), 'since'), 'since')
    const limit = intParam(c.req.query('limit'), 'limit', 1000, 1, SYNC_MAX_LIMIT)
    const changed = await catalog.changedSince(since, limit)
    const { hasMore } = changed
    let { entries } = changed
    if (hasMore && entries.length > 0) {
      const lastAt = entries[entries.length - 1]!.updated_at
      const before = entries.filter((entry) => entry.updated_at < lastAt)
      if (before.length > 0) entries = before
      else {
        // One instant fills the page: deliver that whole instant (up to the hard cap) so the watermark moves.
        const group = await catalog.changedAt(lastAt, SYNC_MAX_LIMIT)
        entries = group.entries
      }
    }
    const watermark = entries.length > 0 ? entries[entries.length - 1]!.updated_at : since
    return reply(c, deps, 'syncCatalog', {
      entries: entries.map((entry) => ({
        property_rid: entry.property_rid,
        property_id: entry.property_id,
        classification: entry.classification,
        source: entry.source,
        status: entry.status,
        adagents_url: entry.adagents_url,
        created_by: entry.created_by,
        created_at: entry.created_at,
        updated_at: entry.updated_at,
        source_updated_at: entry.source_updated_at,
      })),
      server_timestamp: watermark,
      next_cursor: hasMore ? watermark : null,
    })
  })

  app.post('/api/registry/catalog/disputes', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{
      dispute_type: 'identifier_link' | 'classification' | 'property_data' | 'false_merge'
      subject_type: string
      subject_value: string
      claim: string
      evidence?: string
    }>(c, 'fileCatalogDispute', 64 * 1024)
    const orgId = requireOrg(principal)
    const subjectType = body.subject_type.trim()
    let subjectValue = body.subject_value.trim()
    if (subjectType === '' || subjectValue === '' || subjectValue.length > MAX_IDENTIFIER_LENGTH) {
      throw new HttpError(
        400,
        'invalid_request',
        `subject_type and subject_value must be 1 to ${MAX_IDENTIFIER_LENGTH} characters`,
      )
    }
    if (subjectType === 'identifier') subjectValue = normalizeDomain(subjectValue) ?? subjectValue
    const at = new Date(deps.now()).toISOString()
    const filed = await catalog.fileDispute({
      id: uuidv7(deps.now()),
      dispute_type: body.dispute_type,
      subject_type: subjectType,
      subject_value: subjectValue,
      claim: body.claim,
      evidence: body.evidence ?? null,
      filed_by_org_id: orgId,
      created_at: at,
      updated_at: at,
    })
    if (filed === 'unknown_subject') {
      throw new HttpError(400, 'unknown_subject', `the catalog holds no ${subjectType} ${subjectValue}`, {
        details: { field: 'subject_value' },
      })
    }
    return reply(c, deps, 'fileCatalogDispute', {
      dispute_id: filed.id,
      action_taken: filed.action_taken,
      reason: filed.reason,
    })
  })

  app.get('/api/registry/catalog/disputes/:id', async (c) => {
    const id = c.req.param('id').trim()
    const dispute = id.length <= 64 ? await catalog.getDispute(id) : undefined
    if (!dispute) throw new HttpError(404, 'dispute_not_found', `no dispute ${id}`)
    const { filed_by_org_id: _by, ...record } = dispute
    return reply(c, deps, 'getCatalogDispute', record)
  })

  return app
}
