/**
 * Agent Discovery (part 2): agent inventory-profile search (`GET /api/registry/agents/search`) and manager
 * fan-out re-validation (`POST /api/registry/manager-revalidation-request`).
 *
 * An agent's inventory profile is what the crawled adagents.json files authorize it for, in effect now: the
 * property types of its authorized properties, the channels those types sell (see {@link CHANNELS_OF}), the
 * tags on them, the markets (`countries`) its publishers grant it, and the property and publisher counts. The
 * registry stores no content categories, delivery types, creative formats or TMP support, so those dimensions
 * are empty and a filter on them matches no agent (`has_tmp=false` matches every agent).
 */
import { Hono } from 'hono'
import type { DiscoveryJobs } from '../crawl/discovery-jobs.js'
import { canonicalAgentUrl, normalizeDomain } from '../domain/names.js'
import type { RegistryDeps } from '../deps.js'
import { debounce } from './brand-discovery.js'
import { HttpError, intParam, readBody, reply, requirePrincipal } from './http.js'

/** The media channels each property type sells (AdCP channel names). */
export const CHANNELS_OF: Readonly<Record<string, readonly string[]>> = {
  website: ['display', 'olv'],
  mobile_app: ['display', 'olv'],
  desktop_app: ['display'],
  ctv_app: ['ctv'],
  dooh: ['dooh'],
  podcast: ['podcast'],
  radio: ['radio'],
  streaming_audio: ['streaming_audio'],
  linear_tv: ['linear_tv'],
}

const DIMENSIONS = ['channels', 'property_types', 'markets', 'categories', 'tags', 'delivery_types'] as const
type Dimension = (typeof DIMENSIONS)[number]

/** At most this many values per filter, of at most this many characters. */
const MAX_FILTER_VALUES = 50
const MAX_FILTER_VALUE_LENGTH = 64
const DEFAULT_LIMIT = 50
const MAX_LIMIT = 200

interface Profile {
  agent_url: string
  channels: string[]
  property_types: string[]
  markets: string[]
  categories: string[]
  tags: string[]
  delivery_types: string[]
  format_kinds: string[]
  property_count: number
  publisher_count: number
  has_tmp: boolean
  category_taxonomy: string | null
  relevance_score: number
  matched_filters: string[]
  updated_at: string
}

function listParam(value: string | undefined, name: Dimension): string[] | undefined {
  if (value === undefined) return undefined
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  if (items.length === 0) return undefined
  if (items.length > MAX_FILTER_VALUES || items.some((item) => item.length > MAX_FILTER_VALUE_LENGTH)) {
    throw new HttpError(
      400,
      'invalid_parameter',
      `${name} takes at most ${MAX_FILTER_VALUES} values of at most ${MAX_FILTER_VALUE_LENGTH} characters`,
      { details: { parameter: name } },
    )
  }
  return [...new Set(items.map((item) => (name === 'markets' ? item.toUpperCase() : item.toLowerCase())))]
}

const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ o: offset })).toString('base64url')

function decodeCursor(value: string | undefined): number {
  if (value === undefined || value === '') return 0
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { o?: unknown }
    if (typeof parsed.o === 'number' && Number.isSafeInteger(parsed.o) && parsed.o >= 0) return parsed.o
  } catch {
    // answered below
  }
  throw new HttpError(400, 'invalid_cursor', 'cursor is not one this registry issued', {
    details: { parameter: 'cursor' },
  })
}

/** The agent discovery routes (part 2). */
export function agentDiscoveryRoutes(deps: RegistryDeps, jobs: DiscoveryJobs): Hono {
  const app = new Hono()
  const { repository } = deps

  app.get('/api/registry/agents/search', async (c) => {
    await requirePrincipal(c, deps)
    const filters = new Map<Dimension, string[]>()
    for (const name of DIMENSIONS) {
      const values = listParam(c.req.query(name), name)
      if (values) filters.set(name, values)
    }
    const hasTmp = c.req.query('has_tmp')
    if (hasTmp !== undefined && hasTmp !== 'true' && hasTmp !== 'false') {
      throw new HttpError(400, 'invalid_parameter', 'has_tmp must be true or false', {
        details: { parameter: 'has_tmp' },
      })
    }
    const minProperties = intParam(
      c.req.query('min_properties'),
      'min_properties',
      0,
      0,
      Number.MAX_SAFE_INTEGER,
    )
    const limit = intParam(c.req.query('limit'), 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT)
    const offset = decodeCursor(c.req.query('cursor'))

    const profiles = await inventoryProfiles(deps)
    const results: Profile[] = []
    for (const profile of profiles) {
      if (profile.property_count < minProperties) continue
      if (hasTmp === 'true' && !profile.has_tmp) continue
      if (hasTmp === 'false' && profile.has_tmp) continue
      let score = 0
      const matched: string[] = []
      let excluded = false
      for (const [dimension, wanted] of filters) {
        const have = new Set(
          profile[dimension].map((item) => (dimension === 'markets' ? item : item.toLowerCase())),
        )
        const hits = wanted.filter((value) => have.has(value))
        if (hits.length === 0) {
          excluded = true
          break
        }
        score += hits.length / wanted.length
        matched.push(...hits.map((value) => `${dimension}:${value}`))
      }
      if (excluded) continue
      results.push({
        ...profile,
        relevance_score: filters.size === 0 ? 1 : Math.round((score / filters.size) * 1e4) / 1e4,
        matched_filters: matched,
      })
    }
    results.sort(
      (a, b) =>
        b.relevance_score - a.relevance_score ||
        b.property_count - a.property_count ||
        a.agent_url.localeCompare(b.agent_url),
    )
    const page = results.slice(offset, offset + limit)
    const hasMore = offset + limit < results.length
    return reply(c, deps, 'searchAgentProfiles', {
      results: page,
      cursor: hasMore ? encodeCursor(offset + limit) : null,
      has_more: hasMore,
    })
  })

  app.post('/api/registry/manager-revalidation-request', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{ manager_domain: string }>(c, 'requestManagerRevalidation')
    const manager = normalizeDomain(body.manager_domain)
    if (!manager) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    await debounce(deps, 'manager_revalidation', manager, principal.id, 'a manager re-validation')
    const enqueued = await repository.discovery.enqueueManagerRevalidation(
      manager,
      principal.id,
      new Date(deps.now()).toISOString(),
    )
    // The first batch goes at once unless a batch ran within the tick; the tick drains the rest.
    await jobs.drainManagerQueue()
    return reply(
      c,
      deps,
      'requestManagerRevalidation',
      { message: 'Manager re-validation enqueued', manager_domain: manager, publishers_enqueued: enqueued },
      202,
    )
  })

  return app
}

/** Every agent's inventory profile (unfiltered, unscored). */
async function inventoryProfiles(
  deps: RegistryDeps,
): Promise<Array<Omit<Profile, 'relevance_score' | 'matched_filters'>>> {
  const nowIso = new Date(deps.now()).toISOString()
  const [rows, directory] = await Promise.all([
    deps.repository.discovery.agentInventory(nowIso),
    deps.repository.authorizations.directory(),
  ])
  interface Building {
    agent_url: string
    types: Set<string>
    tags: Set<string>
    markets: Set<string>
    publishers: Set<string>
    properties: number
    updated_at: string
  }
  const agents = new Map<string, Building>()
  for (const entry of directory) {
    agents.set(entry.agent_url_canonical, {
      agent_url: entry.agent_url,
      types: new Set(),
      tags: new Set(),
      markets: new Set(),
      publishers: new Set(entry.publisher_domains),
      properties: 0,
      updated_at: '',
    })
  }
  for (const row of rows) {
    const agent = agents.get(row.agent_url_canonical)
    if (!agent) continue
    agent.types.add(row.property_type)
    for (const tag of JSON.parse(row.tags) as string[]) agent.tags.add(tag)
    agent.properties += row.n
    if (row.updated_at > agent.updated_at) agent.updated_at = row.updated_at
  }
  // Markets: the `countries` each publisher's adagents.json grants the agent.
  const domains = [...new Set(directory.flatMap((entry) => entry.publisher_domains))]
  for (const publisher of await deps.repository.publishers.getPublishers(domains)) {
    const granted = publisher.document?.authorized_agents
    if (!Array.isArray(granted)) continue
    for (const grant of granted as Array<Record<string, unknown>>) {
      if (typeof grant?.url !== 'string' || !Array.isArray(grant.countries)) continue
      const agent = agents.get(canonicalAgentUrl(grant.url))
      for (const country of grant.countries)
        if (agent && typeof country === 'string') agent.markets.add(country.toUpperCase())
    }
  }
  return [...agents.values()].map((agent) => ({
    agent_url: agent.agent_url,
    channels: [...new Set([...agent.types].flatMap((type) => CHANNELS_OF[type] ?? []))].sort(),
    property_types: [...agent.types].sort(),
    markets: [...agent.markets].sort(),
    categories: [],
    tags: [...agent.tags].sort(),
    delivery_types: [],
    format_kinds: [],
    property_count: agent.properties,
    publisher_count: agent.publishers.size,
    has_tmp: false,
    category_taxonomy: null,
    updated_at: agent.updated_at || nowIso,
  }))
}
