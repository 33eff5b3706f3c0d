/** Authorization Lookups: expand, the two authorization checks, identifier/domain/agent/publisher lookups. */
import { Hono, type Context } from 'hono'
import { compact } from '../db/json.js'
import { canonicalAgentUrl, normalizeDomain } from '../domain/names.js'
import { applySelector, selectorDomains, selectorProblem, type Selector } from '../domain/selectors.js'
import type { PropertyRecord } from '../domain/types.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, HttpError, readBody, reply, requirePrincipal, required } from './http.js'
import { agentPublishers } from './agent-publishers.js'
import { operatorLookup } from './operator.js'
import { assertCrawlable, debounce, isAdmin } from './brand-discovery.js'

interface SelectorBody {
  agent_url: string
  publisher_properties: Selector[]
}

async function readSelectors(c: Context, operationId: string): Promise<SelectorBody> {
  const body = await readBody<SelectorBody>(c, operationId)
  if (body.agent_url.trim() === '')
    throw new HttpError(400, 'missing_field', 'Missing required field: agent_url')
  agentUrlParam(body.agent_url, 'agent_url')
  body.publisher_properties.forEach((selector, index) => {
    const problem = selectorProblem(selector, index)
    if (problem) throw new HttpError(400, 'invalid_selector', problem)
  })
  return body
}

const nowIso = (deps: RegistryDeps) => new Date(deps.now()).toISOString()

interface ExpandedProperty {
  publisher_domain: string
  property_id: string
  property_name: string
  property_type: string
  identifiers: PropertyRecord['identifiers']
  tags: string[]
}

interface ExpandedIdentifier {
  type: string
  value: string
  property_id: string
  publisher_domain: string
}

/** Appends the expand wire entries of `property`: its property entry, and one entry per identifier. */
function expandInto(
  property: PropertyRecord,
  properties: ExpandedProperty[],
  identifiers: ExpandedIdentifier[],
): void {
  properties.push({
    publisher_domain: property.publisher_domain,
    property_id: property.property_id,
    property_name: property.name,
    property_type: property.property_type,
    identifiers: property.identifiers,
    tags: property.tags,
  })
  for (const identifier of property.identifiers)
    identifiers.push({
      type: identifier.type,
      value: identifier.value,
      property_id: property.property_id,
      publisher_domain: property.publisher_domain,
    })
}

/** The lookup routes. */
export function lookupRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps

  app.post('/api/registry/expand/product-identifiers', async (c) => {
    const body = await readSelectors(c, 'expandProductIdentifiers')
    const agent = canonicalAgentUrl(body.agent_url)
    const authorizing = () => repository.authorizations.agentDomains(agent)
    // One pass over each publisher's authorized properties builds both wire lists (a selector can address
    // tens of thousands of properties; the same property picked twice is listed once).
    const properties: ExpandedProperty[] = []
    const identifiers: ExpandedIdentifier[] = []
    const seen = new Map<string, Set<string>>()
    for (const selector of body.publisher_properties) {
      for (const domain of await selectorDomains(selector, authorizing)) {
        const authorized = await repository.authorizations.authorizedProperties(agent, domain, nowIso(deps))
        const listed = seen.get(domain) ?? new Set<string>()
        seen.set(domain, listed)
        for (const property of applySelector(selector, authorized)) {
          if (listed.has(property.property_id)) continue
          listed.add(property.property_id)
          expandInto(property, properties, identifiers)
        }
      }
    }
    return reply(c, deps, 'expandProductIdentifiers', {
      agent_url: body.agent_url,
      properties,
      identifiers,
      property_count: properties.length,
      identifier_count: identifiers.length,
      generated_at: nowIso(deps),
    })
  })

  app.post('/api/registry/validate/product-authorization', async (c) => {
    const body = await readSelectors(c, 'validateProductAuthorization')
    const agent = canonicalAgentUrl(body.agent_url)
    const authorizing = () => repository.authorizations.agentDomains(agent)
    const details = []
    for (const selector of body.publisher_properties) {
      // A selector naming no publisher addresses the properties it picks at the publishers authorizing the
      // agent: a publisher where it picks nothing is not part of the product, so it does not make it false.
      const named = selector.publisher_domain !== undefined || selector.publisher_domains !== undefined
      for (const domain of await selectorDomains(selector, authorizing)) {
        const all = applySelector(selector, await repository.publishers.getProperties(domain))
        if (!named && all.length === 0) continue
        const authorizedIds = new Set(
          applySelector(
            selector,
            await repository.authorizations.authorizedProperties(agent, domain, nowIso(deps)),
          ).map((property) => property.property_id),
        )
        const missing =
          selector.selection_type === 'by_id'
            ? (selector.property_ids ?? []).filter((id) => !authorizedIds.has(id))
            : all
                .filter((property) => !authorizedIds.has(property.property_id))
                .map((property) => property.property_id)
        details.push({
          publisher_domain: domain,
          requested: all.length,
          authorized: authorizedIds.size,
          unauthorized_property_ids: missing,
          authorized_all: all.length > 0 && missing.length === 0,
        })
      }
    }
    return reply(c, deps, 'validateProductAuthorization', {
      agent_url: body.agent_url,
      authorized: details.length > 0 && details.every((detail) => detail.authorized_all),
      checked_at: nowIso(deps),
      publishers: details,
    })
  })

  app.get('/api/registry/validate/property-authorization', async (c) => {
    const agentUrl = agentUrlParam(c.req.query('agent_url'), 'agent_url')
    const type = required(c.req.query('identifier_type'), 'identifier_type')
    const value = required(c.req.query('identifier_value'), 'identifier_value')
    const authorized = await repository.authorizations.isAuthorizedForIdentifier(
      canonicalAgentUrl(agentUrl),
      type,
      value,
      nowIso(deps),
    )
    return reply(c, deps, 'validatePropertyAuthorization', {
      agent_url: agentUrl,
      identifier_type: type,
      identifier_value: value,
      authorized,
      checked_at: nowIso(deps),
    })
  })

  app.get('/api/registry/lookup/property', async (c) => {
    const type = required(c.req.query('type'), 'type')
    const value = required(c.req.query('value'), 'value')
    const agents = await repository.authorizations.agentsForIdentifier(type, value, nowIso(deps))
    return reply(c, deps, 'lookupProperty', {
      type,
      value,
      agents: agents.map((agent) => compact({ ...agent })),
      count: agents.length,
    })
  })

  app.get('/api/registry/lookup/domain/:domain', async (c) => {
    const domain = normalizeDomain(c.req.param('domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const rows = await repository.authorizations.forPublisher(domain)
    const agents = new Map<string, { url: string; authorized_for?: string }>()
    for (const row of rows)
      if (!agents.has(row.agent_url_canonical))
        agents.set(
          row.agent_url_canonical,
          compact({ url: row.agent_url, authorized_for: row.authorized_for ?? undefined }),
        )
    return reply(c, deps, 'lookupDomain', {
      domain,
      authorized_agents: [...agents.values()],
      sales_agents_claiming: [],
    })
  })

  app.get('/api/registry/lookup/agent/:agentUrl/domains', async (c) => {
    const agentUrl = agentUrlParam(c.req.param('agentUrl'), 'agentUrl')
    const domains = await repository.authorizations.agentDomains(canonicalAgentUrl(agentUrl))
    return reply(c, deps, 'getAgentDomains', { agent_url: agentUrl, domains, count: domains.length })
  })

  app.get('/api/registry/publisher/authorization', async (c) => {
    const domain = normalizeDomain(required(c.req.query('domain'), 'domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const agentUrl = agentUrlParam(c.req.query('agent'), 'agent')
    const publisher = await repository.publishers.getPublisher(domain)
    if (!publisher) throw new HttpError(404, 'publisher_not_found', `${domain} is not in the registry`)
    const agent = canonicalAgentUrl(agentUrl)
    const rows = (await repository.authorizations.forPublisher(domain)).filter(
      (row) => row.agent_url_canonical === agent,
    )
    const all = await repository.publishers.getProperties(domain)
    const publisherWide = rows.some((row) => row.property_id === null)
    const ids = new Set(rows.map((row) => row.property_id))
    const unauthorized = publisherWide ? [] : all.filter((property) => !ids.has(property.property_id))
    return reply(
      c,
      deps,
      'lookupPublisherAgentAuthorization',
      compact({
        publisher_domain: domain,
        agent_url: agentUrl,
        authorized: all.length - unauthorized.length,
        total: all.length,
        publisher_wide: publisherWide && rows.every((row) => row.property_id === null),
        source: 'adagents_json',
        authorized_for: rows[0]?.authorized_for ?? undefined,
        unauthorized_properties: unauthorized.map((property) => ({
          id: property.property_id,
          name: property.name,
          type: property.property_type,
        })),
      }),
    )
  })

  app.get('/api/registry/operator', async (c) => {
    const domain = normalizeDomain(required(c.req.query('domain'), 'domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const scope = c.req.query('scope') ?? 'all'
    if (!['public', 'member', 'private', 'all'].includes(scope))
      throw new HttpError(400, 'invalid_parameter', 'scope must be public, member, private or all')
    return reply(c, deps, 'lookupOperator', await operatorLookup(c, deps, domain, scope))
  })

  // Admin-only, one live fetch per domain per 5 minutes (the document's description of the operation): 401
  // without a credential, 400 for a malformed domain, 403 for any other key, 400 for a domain that resolves
  // nowhere or only to non-public addresses (nothing recorded), 429 within the interval.
  app.post('/api/registry/publisher/:domain/adagents/revalidate', async (c) => {
    const admin = isAdmin(c, deps)
    if (!admin) await requirePrincipal(c, deps)
    const domain = normalizeDomain(c.req.param('domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    if (!admin) {
      throw new HttpError(403, 'admin_required', 'adagents.json revalidation is for registry administrators')
    }
    await assertCrawlable(deps, domain)
    await debounce(deps, 'adagents_revalidation', domain, 'admin', 'an adagents.json revalidation')
    let crawled: Awaited<ReturnType<typeof deps.crawler.crawlPublisher>>
    try {
      crawled = await deps.crawler.crawlPublisher(domain, 'admin')
    } catch (error) {
      await deps.repository.discovery.finishOutbound(
        'adagents_revalidation',
        domain,
        'failed',
        nowIso(deps),
        'internal_error',
      )
      throw error
    }
    const { inspection, events } = crawled
    await deps.repository.discovery.finishOutbound(
      'adagents_revalidation',
      domain,
      inspection.valid ? 'completed' : 'failed',
      nowIso(deps),
      inspection.valid ? undefined : (inspection.errors[0]?.message ?? 'invalid'),
    )
    if (events.length > 0) deps.hub.notify()
    const document = inspection.document ?? {}
    return reply(
      c,
      deps,
      'revalidatePublisherAdagents',
      compact({
        domain,
        adagents_valid: inspection.valid,
        checked_at: nowIso(deps),
        issues: { errors: inspection.errors, warnings: inspection.warnings },
        properties_count: Array.isArray(document.properties) ? document.properties.length : 0,
        authorized_agents_count: Array.isArray(document.authorized_agents)
          ? document.authorized_agents.length
          : 0,
        status_code: inspection.status_code,
        response_bytes: inspection.response_bytes,
        resolved_url: inspection.resolved_url,
        discovery_method: inspection.discovery_method,
      }),
    )
  })

  app.get('/v1/agents/:encodedUrl/publishers', (c) => agentPublishers(c, deps, 'getPublishersForAgent'))
  app.get('/api/v1/agents/:encodedUrl/publishers', (c) =>
    agentPublishers(c, deps, 'getPublishersForAgentLegacyApiPrefix'),
  )
  return app
}
