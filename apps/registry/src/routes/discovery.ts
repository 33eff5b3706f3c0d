/** Agent Discovery (this part): list agents, list publishers, statistics, crawl requests. */
import { Hono } from 'hono'
import { compact } from '../db/json.js'
import { newId } from '../domain/ids.js'
import { canonicalAgentUrl, normalizeDomain } from '../domain/names.js'
import type { AgentType } from '../domain/types.js'
import type { RegistryDeps } from '../deps.js'
import type { CrawlQueue } from '../crawl/queue.js'
import { debounce } from './brand-discovery.js'
import { errorBody, HttpError, readBody, reply, requirePrincipal, uuidParam } from './http.js'

const AGENT_TYPES: AgentType[] = [
  'brand',
  'rights',
  'measurement',
  'governance',
  'creative',
  'sales',
  'buying',
  'signals',
  'unknown',
]
/**
 * The listAgents parameters this registry cannot answer from what it stores (crawled adagents.json facts and
 * member registrations): live health probes, capability snapshots, compliance runs, measurement catalogs,
 * creative format capabilities and verification badges. A request naming one is refused with 400
 * `unsupported_filter` instead of being silently ignored.
 */
export const UNSUPPORTED_AGENT_PARAMETERS: Readonly<Record<string, string>> = {
  health: 'live health checks (agents are not probed)',
  capabilities: 'capability snapshots (get_adcp_capabilities is not crawled)',
  compliance: 'compliance runs',
  metric_id: 'measurement metric catalogs',
  accreditation: 'measurement accreditations',
  q: 'measurement metric search',
  format_kind: 'creative format capabilities',
  publisher_domain: 'creative format capabilities',
  format_option_id: 'creative format capabilities',
  capability_id: 'creative format capabilities',
  creative_operation: 'creative format capabilities',
  verification_mode: 'verification badges',
  verified: 'verification badges',
}

/** One crawl request per domain per this many seconds (upstream: 1 per 5 min per domain). */
export const CRAWL_REQUEST_INTERVAL_SECONDS = 300

/** The discovery routes. */
export function discoveryRoutes(deps: RegistryDeps, queue: CrawlQueue): Hono {
  const app = new Hono()
  const { repository } = deps

  app.get('/api/registry/agents', async (c) => {
    const type = c.req.query('type')
    if (type !== undefined && !AGENT_TYPES.includes(type as AgentType)) {
      return c.json(
        errorBody('invalid_parameter', `type must be one of ${AGENT_TYPES.join(', ')}`, {
          valid_values: AGENT_TYPES,
        }),
        400,
      )
    }
    const unsupported = Object.keys(UNSUPPORTED_AGENT_PARAMETERS).filter(
      (name) => c.req.query(name) !== undefined,
    )
    if (unsupported.length > 0) {
      throw new HttpError(
        400,
        'unsupported_filter',
        `this registry cannot answer ${unsupported
          .map((name) => `${name} (${UNSUPPORTED_AGENT_PARAMETERS[name]})`)
          .join(', ')}: it stores crawled adagents.json facts and member registrations only`,
        { unsupported },
      )
    }
    const properties = c.req.query('properties')
    if (properties !== undefined && properties !== 'true')
      throw new HttpError(400, 'invalid_parameter', 'properties must be "true" when present')
    const withProperties = properties === 'true'
    const directory = await repository.authorizations.directory()
    const members = await repository.members.listVisibleAgents(['public'])
    const agents = new Map<string, Record<string, unknown>>()
    for (const member of members) {
      agents.set(
        canonicalAgentUrl(member.url),
        compact({
          url: member.url,
          name: member.name ?? new URL(member.url).host,
          type: member.type,
          added_date: member.created_at,
        }),
      )
    }
    for (const entry of directory) {
      const known = agents.get(entry.agent_url_canonical)
      const base = known ?? {
        url: entry.agent_url,
        name: URL.canParse(entry.agent_url) ? new URL(entry.agent_url).host : entry.agent_url,
        type: 'sales',
      }
      const summary = withProperties
        ? await propertySummary(deps, entry.agent_url_canonical, entry.publisher_domains)
        : undefined
      agents.set(
        entry.agent_url_canonical,
        compact({ ...base, publisher_domains: entry.publisher_domains, property_summary: summary }),
      )
    }
    const list = [...agents.values()].filter((agent) => !type || agent.type === type)
    return reply(c, deps, 'listAgents', { agents: list, count: list.length })
  })

  app.get('/api/registry/publishers', async (c) => {
    const { items } = await repository.publishers.listPublishers({ limit: 10_000, offset: 0 })
    const publishers = items.map(({ publisher, agent_count }) =>
      compact({
        domain: publisher.domain,
        agent_count,
        last_validated: publisher.last_validated,
        has_valid_adagents: publisher.source === 'adagents_json' && publisher.valid === true,
      }),
    )
    return reply(c, deps, 'listPublishers', { publishers, count: publishers.length })
  })

  app.get('/api/registry/stats', async (c) => {
    return reply(c, deps, 'getRegistryStats', {
      ...(await repository.requests.counts()),
      generated_at: new Date(deps.now()).toISOString(),
    })
  })

  app.post('/api/registry/crawl-request', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{ domain: string }>(c, 'requestCrawl')
    const domain = normalizeDomain(body.domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const now = deps.now()
    // One crawl per domain per 5 minutes, whoever asks and whatever became of the earlier one (the document's
    // "5 minutes per domain"): a request within the interval is answered 429 and starts nothing. The earlier
    // crawl may also be the automatic one of a publisher lookup; the claim makes concurrent requests race safely.
    const recent = await repository.requests.recentCrawlRequest(
      domain,
      new Date(now - CRAWL_REQUEST_INTERVAL_SECONDS * 1000).toISOString(),
    )
    const until = recent ? Date.parse(recent.requested_at) + CRAWL_REQUEST_INTERVAL_SECONDS * 1000 : 0
    if (until > now) {
      const retryAfter = Math.max(1, Math.ceil((until - now) / 1000))
      throw new HttpError(
        429,
        'rate_limited',
        `a crawl of ${domain} was requested less than ${CRAWL_REQUEST_INTERVAL_SECONDS / 60} minutes ago; retry in ${retryAfter} s`,
        { retryAfter, retry_after: retryAfter },
        { 'Retry-After': String(retryAfter) },
      )
    }
    await debounce(deps, 'crawl_request', domain, principal.id, 'a crawl')
    const id = newId()
    await repository.requests.createCrawlRequest({
      id,
      domain,
      status: 'queued',
      attempts: 0,
      max_attempts: 3,
      requested_by: principal.id,
      requested_at: new Date(now).toISOString(),
      started_at: null,
      last_attempted_at: null,
      completed_at: null,
      next_attempt_at: null,
      last_error_code: null,
    })
    queue.kick()
    return reply(
      c,
      deps,
      'requestCrawl',
      { message: 'Crawl request accepted', domain, crawl_request_id: id },
      202,
    )
  })

  app.get('/api/registry/crawl-request/:crawlRequestId', async (c) => {
    await requirePrincipal(c, deps)
    const request = await repository.requests.getCrawlRequest(
      uuidParam(c.req.param('crawlRequestId'), 'crawlRequestId'),
    )
    if (!request) throw new HttpError(404, 'crawl_request_not_found', 'no such crawl request')
    const { requested_by: _by, id, ...rest } = request
    void _by
    return reply(c, deps, 'getCrawlRequest', { crawl_request_id: id, ...rest })
  })

  return app
}

async function propertySummary(deps: RegistryDeps, agent: string, domains: string[]) {
  const countByType: Record<string, number> = {}
  const tags = new Set<string>()
  let total = 0
  const now = new Date(deps.now()).toISOString()
  for (const domain of domains) {
    for (const property of await deps.repository.authorizations.authorizedProperties(agent, domain, now)) {
      total += 1
      countByType[property.property_type] = (countByType[property.property_type] ?? 0) + 1
      for (const tag of property.tags) tags.add(tag)
    }
  }
  return {
    total_count: total,
    count_by_type: countByType,
    tags: [...tags].sort(),
    publisher_count: domains.length,
  }
}
