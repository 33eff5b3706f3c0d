/** Property Resolution: resolve (single, bulk), registry list, validate, history, save and list checks. */
import { Hono } from 'hono'
import { addRevision } from '../db/brands.js'
import { compact } from '../db/json.js'
import { newId } from '../domain/ids.js'
import { normalizeDomain } from '../domain/names.js'
import { resolveProperty } from '../domain/property-service.js'
import { authorizePropertyWrite } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, intParam, uuidParam, readBody, reply, requirePrincipal, required } from './http.js'
import { mapLimit } from './concurrency.js'
import { checkDomains, checkIdentifiers } from './property-checks.js'

const REPORT_DAYS = 7

const domainParam = (value: string | undefined): string => {
  const domain = normalizeDomain(required(value, 'domain'))
  if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
  return domain
}

/** The property routes. */
export function propertyRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository, crawler } = deps

  app.get('/api/properties/resolve', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const resolved = await resolveProperty(repository, crawler, domain)
    if (!resolved)
      throw new HttpError(404, 'property_not_found', `no properties are known for ${domain}`, { domain })
    return reply(c, deps, 'resolveProperty', resolved)
  })

  app.post('/api/properties/resolve/bulk', async (c) => {
    const body = await readBody<{ domains: string[] }>(c, 'resolvePropertiesBulk')
    const results: Record<string, unknown> = {}
    await mapLimit([...new Set(body.domains)], 4, async (input) => {
      const domain = normalizeDomain(input)
      results[input] = domain ? ((await resolveProperty(repository, crawler, domain)) ?? null) : null
    })
    return reply(c, deps, 'resolvePropertiesBulk', { results })
  })

  app.get('/api/properties/registry', async (c) => {
    const { items, total } = await repository.publishers.listPublishers({
      ...(c.req.query('search') ? { search: c.req.query('search')! } : {}),
      limit: intParam(c.req.query('limit'), 'limit', 100, 1, 1000),
      offset: intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    })
    return reply(c, deps, 'listProperties', {
      properties: items.map(({ publisher, property_count, agent_count }) => ({
        domain: publisher.domain,
        source: publisher.source,
        property_count,
        agent_count,
        verified:
          (publisher.source === 'adagents_json' && publisher.valid === true) || publisher.source === 'hosted',
      })),
      stats: { total },
    })
  })

  app.get('/api/properties/validate', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const inspection = await crawler.inspectAdagents(domain)
    return reply(
      c,
      deps,
      'validateProperty',
      compact({
        valid: inspection.valid,
        domain,
        url: inspection.resolved_url ?? inspection.url,
        errors: inspection.errors.map((issue) => `${issue.field}: ${issue.message}`),
        warnings: inspection.warnings.map((warning) => `${warning.field}: ${warning.message}`),
        status_code: inspection.status_code,
        raw_data:
          inspection.raw_data &&
          typeof inspection.raw_data === 'object' &&
          !Array.isArray(inspection.raw_data)
            ? inspection.raw_data
            : undefined,
      }),
    )
  })

  app.get('/api/properties/history', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const history = await repository.brands.history(
      'property',
      domain,
      intParam(c.req.query('limit'), 'limit', 20, 1, 100),
      intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    )
    // A publisher that resolves has a history, even one the registry only ever crawled (no revision yet).
    if (history.total === 0 && !(await repository.publishers.getPublisher(domain)))
      throw new HttpError(404, 'property_not_found', `no history for ${domain}`, { domain })
    return reply(c, deps, 'getPropertyHistory', {
      domain,
      total: history.total,
      revisions: history.revisions.map((revision) => ({ ...revision, is_rollback: false })),
    })
  })

  app.post('/api/properties/save', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{
      publisher_domain: string
      authorized_agents?: unknown[]
      properties?: Array<{ type: string; name: string }>
      contact?: { name?: string; email?: string }
    }>(c, 'saveProperty')
    const domain = normalizeDomain(body.publisher_domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const existing = await repository.publishers.getPublisher(domain)
    if (existing?.source === 'adagents_json' && existing.valid) {
      throw new HttpError(
        409,
        'publisher_authoritative',
        `${domain} publishes its own adagents.json; it is the only source for that publisher`,
      )
    }
    // Only the property's owner (the hosted domain's verified owner, else its first saver) may write it.
    await authorizePropertyWrite(c, deps, domain)
    // The owner's edit of an origin-verified hosted publisher keeps it verified.
    const hosted = existing?.source === 'hosted'
    // Identity only: community rows never assert sales authorization (authorized_agents is ignored).
    await repository.publishers.saveSnapshot(
      {
        publisher: compact({
          domain,
          source: hosted ? ('hosted' as const) : ('community' as const),
          valid: null,
          contact: body.contact,
          ...(hosted
            ? { discovery_method: existing.discovery_method, resolved_url: existing.resolved_url }
            : {}),
        }) as never,
        properties: (body.properties ?? []).map((property, index) => ({
          publisher_domain: domain,
          property_id: `community_${index + 1}`,
          property_type: property.type,
          name: property.name,
          identifiers: [{ type: 'domain', value: domain }],
          tags: [],
          source: hosted ? ('hosted' as const) : ('community' as const),
        })),
        authorizations: [],
      },
      principal.id,
      deps.now(),
    )
    const revision = await repository.driver.transaction((tx) =>
      addRevision(
        tx,
        'property',
        domain,
        { editor_name: principal.id, edit_summary: existing ? 'updated' : 'created', source: 'community' },
        new Date(deps.now()).toISOString(),
      ),
    )
    // The response has no warnings member: the free-text message says the field was dropped.
    const ignored = body.authorized_agents?.length
      ? "; authorized_agents ignored: sales authorization comes only from the publisher's own adagents.json"
      : ''
    return reply(c, deps, 'saveProperty', {
      success: true,
      message: `${existing ? 'Property updated' : 'Property created'}${ignored}`,
      id: domain,
      revision_number: revision,
    })
  })

  app.post('/api/properties/check', async (c) => {
    const body = await readBody<{ domains: string[] }>(c, 'checkPropertyList')
    const report = await checkDomains(repository, body.domains)
    const id = newId()
    await repository.requests.saveReport(id, 'domains', report, new Date(deps.now()).toISOString())
    return reply(c, deps, 'checkPropertyList', { ...report, report_id: id })
  })

  app.get('/api/properties/check/bulk/:reportId', async (c) => {
    const report = await repository.requests.getReport(
      uuidParam(c.req.param('reportId'), 'reportId'),
      'identifiers',
      new Date(deps.now() - REPORT_DAYS * 86_400_000).toISOString(),
    )
    if (!report) throw new HttpError(404, 'report_not_found', 'no such report (reports are kept 7 days)')
    return reply(c, deps, 'getBulkPropertyCheckReport', report)
  })

  app.get('/api/properties/check/:reportId', async (c) => {
    const report = await repository.requests.getReport(
      c.req.param('reportId'),
      'domains',
      new Date(deps.now() - REPORT_DAYS * 86_400_000).toISOString(),
    )
    if (!report) throw new HttpError(404, 'report_not_found', 'no such report (reports are kept 7 days)')
    return reply(c, deps, 'getPropertyCheckReport', report)
  })

  app.post('/api/properties/check/bulk', async (c) => {
    const body = await readBody<{ identifiers: string[] }>(c, 'bulkPropertyCheck')
    const report = await checkIdentifiers(repository, body.identifiers)
    const id = newId()
    await repository.requests.saveReport(id, 'identifiers', report, new Date(deps.now()).toISOString())
    return reply(c, deps, 'bulkPropertyCheck', { ...report, report_id: id })
  })

  return app
}
