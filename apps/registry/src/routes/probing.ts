/**
 * Agent Probing (`/api/public/*`): a live agent's identity, formats, products and publishers read over MCP or
 * A2A, and a publisher's adagents.json validated with summary counts. A URL the SSRF policy refuses is a 400,
 * an agent that does not answer in time a 504, one that answers but not as an AdCP agent a 502.
 */
import { Hono } from 'hono'
import type { AgentProber } from '../compliance/probe-agents.js'
import { ProbeError } from '../compliance/probe.js'
import { normalizeDomain } from '../domain/names.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, HttpError, reply, required } from './http.js'

/** The HTTP error of a failed probe. */
export function probeFailure(error: unknown): never {
  if (!(error instanceof ProbeError)) throw error
  switch (error.kind) {
    case 'refused':
      throw new HttpError(400, 'agent_url_refused', `the registry does not connect there: ${error.message}`)
    case 'timeout':
      throw new HttpError(504, 'agent_timeout', error.message)
    default:
      throw new HttpError(502, 'agent_discovery_failed', error.message)
  }
}

const DISCOVERY_METHODS = new Set(['direct', 'authoritative_location', 'ads_txt_managerdomain'])

/** The probing routes. */
export function probingRoutes(deps: RegistryDeps, prober: AgentProber): Hono {
  const app = new Hono()

  app.get('/api/public/discover-agent', async (c) => {
    const url = agentUrlParam(c.req.query('url'), 'url')
    const agent = await prober.discover(url).catch(probeFailure)
    return reply(c, deps, 'discoverAgent', agent)
  })

  app.get('/api/public/agent-formats', async (c) => {
    const url = agentUrlParam(c.req.query('url'), 'url')
    const formats = await prober.formats(url).catch(probeFailure)
    return reply(c, deps, 'getAgentFormats', { success: true, formats })
  })

  app.get('/api/public/agent-products', async (c) => {
    const url = agentUrlParam(c.req.query('url'), 'url')
    const products = await prober.products(url).catch(probeFailure)
    return reply(c, deps, 'getAgentProducts', { success: true, products })
  })

  app.get('/api/public/agent-publishers', async (c) => {
    const url = agentUrlParam(c.req.query('url'), 'url')
    const properties = await prober.publishers(url).catch(probeFailure)
    return reply(c, deps, 'getAgentPublishers', { success: true, properties })
  })

  app.get('/api/public/validate-publisher', async (c) => {
    const domain = normalizeDomain(required(c.req.query('domain'), 'domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const inspection = await deps.crawler.inspectAdagents(domain)
    const document = inspection.valid ? (inspection.document ?? {}) : {}
    const properties = Array.isArray(document.properties)
      ? (document.properties as Array<Record<string, unknown>>)
      : []
    const typeCounts: Record<string, number> = {}
    const tags = new Set<string>()
    for (const property of properties) {
      const type = typeof property.property_type === 'string' ? property.property_type : 'unknown'
      typeCounts[type] = (typeCounts[type] ?? 0) + 1
      if (Array.isArray(property.tags)) for (const tag of property.tags) tags.add(String(tag))
    }
    if (document.tags && typeof document.tags === 'object') {
      for (const tag of Object.keys(document.tags)) tags.add(tag)
    }
    const method =
      inspection.discovery_method === 'adagents_authoritative'
        ? 'authoritative_location'
        : inspection.discovery_method
    return reply(c, deps, 'validatePublisher', {
      valid: inspection.valid,
      domain,
      url: inspection.resolved_url ?? inspection.url,
      discovery_method: DISCOVERY_METHODS.has(method) ? method : 'direct',
      agent_count: Array.isArray(document.authorized_agents) ? document.authorized_agents.length : 0,
      property_count: properties.length,
      property_type_counts: typeCounts,
      tag_count: tags.size,
      errors: inspection.errors.map((issue) => `${issue.field}: ${issue.message}`),
      warnings: inspection.warnings.map((warning) => `${warning.field}: ${warning.message}`),
    })
  })

  return app
}
