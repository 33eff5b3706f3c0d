/** The inverse directory lookup: which publishers authorize an agent (`/v1/agents/{encodedUrl}/publishers`). */
import type { Context } from 'hono'
import type { RegistryDeps } from '../deps.js'
import { canonicalAgentUrl } from '../domain/names.js'
import { agentUrlParam, HttpError, intParam, reply } from './http.js'

const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString('base64url')
function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0
  try {
    const offset = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { offset: unknown })
      .offset
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset
  } catch {
    // fall through
  }
  throw new HttpError(400, 'invalid_cursor', 'cursor is not one this registry returned')
}

export async function agentPublishers(
  c: Context,
  deps: RegistryDeps,
  operationId: string,
): Promise<Response> {
  const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
  const statuses = c.req.queries('status') ?? ['authorized']
  const include = c.req.queries('include') ?? []
  for (const status of statuses)
    if (!['authorized', 'revoked'].includes(status))
      throw new HttpError(
        400,
        'invalid_parameter',
        'status must be authorized or revoked, repeated once per value',
      )
  for (const item of include)
    if (item !== 'properties')
      throw new HttpError(400, 'invalid_parameter', 'include must be properties, repeated once per value')
  const since = c.req.query('since')
  if (since !== undefined && Number.isNaN(Date.parse(since)))
    throw new HttpError(400, 'invalid_parameter', 'since must be an ISO 8601 date-time')
  const limit = intParam(c.req.query('limit'), 'limit', 200, 1, 1000)
  const offset = decodeCursor(c.req.query('cursor'))
  const rows = statuses.includes('authorized')
    ? await deps.repository.authorizations.forAgent(canonicalAgentUrl(agentUrl))
    : []
  const domains = [...new Set(rows.map((row) => row.publisher_domain))]
  const publishers = new Map(
    (await deps.repository.publishers.getPublishers(domains)).map((publisher) => [
      publisher.domain,
      publisher,
    ]),
  )
  const entries = []
  for (const domain of domains) {
    const publisher = publishers.get(domain)
    const verifiedAt =
      publisher?.last_validated ?? publisher?.updated_at ?? new Date(deps.now()).toISOString()
    if (since && Date.parse(verifiedAt) < Date.parse(since)) continue
    const own = rows.filter((row) => row.publisher_domain === domain)
    const all = await deps.repository.publishers.getProperties(domain)
    const ids = own.some((row) => row.property_id === null)
      ? all.map((property) => property.property_id)
      : own.map((row) => row.property_id!)
    entries.push({
      publisher_domain: domain,
      discovery_method: publisher?.discovery_method ?? 'direct',
      manager_domain: publisher?.manager_domain ?? null,
      properties_authorized: ids.length,
      properties_total: all.length,
      ...(include.includes('properties') ? { property_ids: ids } : {}),
      signing_keys_pinned: own.some((row) => Array.isArray(row.signing_keys) && row.signing_keys.length > 0),
      status: 'authorized',
      last_verified_at: verifiedAt,
    })
  }
  const page = entries.slice(offset, offset + limit)
  return reply(c, deps, operationId, {
    agent_url: agentUrl,
    directory_indexed_at:
      page.length > 0
        ? page
            .map((entry) => entry.last_verified_at)
            .sort()
            .at(-1)!
        : null,
    publishers: page,
    next_cursor: offset + limit < entries.length ? encodeCursor(offset + limit) : null,
  })
}
