/**
 * Search: the `/api` discovery document, cross-entity full-text search (`/api/search`, over the index of
 * migration 6) and the manifest reference lookup (`/api/manifest-refs/lookup`).
 *
 * `/api/search` answers the document's shape — `brands`, `publishers`, `properties`, up to 5 each — plus the
 * documented additions of the served document (see `spec/openapi.ts`): `agents`, `has_more` per category, and
 * the optional `types`, `limit` and `offset` parameters that page through one category in relevance order.
 */
import { Hono } from 'hono'
import type { Context } from 'hono'
import { SEARCH_CATEGORIES, searchTerms, type SearchCategory } from '../db/search.js'
import { normalizeDomain } from '../domain/names.js'
import type { RegistryDeps } from '../deps.js'
import { registryDocument } from '../spec/openapi.js'
import { HttpError, intParam, reply, required } from './http.js'

/** The longest search query accepted, characters. */
export const MAX_QUERY_LENGTH = 256
/** Results per category: default (the document's "up to 5") and maximum of `limit`. */
export const DEFAULT_SEARCH_LIMIT = 5
export const MAX_SEARCH_LIMIT = 50
/** The deepest `offset` accepted (beyond it, narrow the query). */
export const MAX_SEARCH_OFFSET = 10_000

/** Manifest types `lookupManifestRef` answers for. */
const MANIFEST_TYPES = ['brand.json', 'adagents.json'] as const

/** The main entry points listed by `GET /api`, path by name. */
const ENDPOINTS: Record<string, string> = {
  search: '/api/search',
  manifest_refs: '/api/manifest-refs/lookup',
  brands_resolve: '/api/brands/resolve',
  brands_registry: '/api/brands/registry',
  properties_resolve: '/api/properties/resolve',
  properties_registry: '/api/properties/registry',
  agents: '/api/registry/agents',
  agents_search: '/api/registry/agents/search',
  publishers: '/api/registry/publishers',
  lookup_domain: '/api/registry/lookup/domain/{domain}',
  feed: '/api/registry/feed',
  authorizations: '/api/registry/authorizations',
  stats: '/api/registry/stats',
}

function typesParam(value: string | undefined): SearchCategory[] {
  if (value === undefined || value.trim() === '') return [...SEARCH_CATEGORIES]
  const types = value.split(',').map((item) => item.trim())
  const unknown = types.filter((item) => !SEARCH_CATEGORIES.includes(item as SearchCategory))
  if (unknown.length > 0 || types.length === 0) {
    throw new HttpError(400, 'invalid_parameter', `types must be a list of ${SEARCH_CATEGORIES.join(', ')}`, {
      details: { parameter: 'types', valid_values: SEARCH_CATEGORIES },
    })
  }
  return [...new Set(types as SearchCategory[])]
}

/** The search routes. */
export function searchRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps

  app.get('/api', (c) => {
    const base = deps.publicUrl(c)
    const info = registryDocument().info as { version?: string }
    return reply(c, deps, 'apiDiscovery', {
      name: 'AdCP Registry (adwire)',
      version: String(info.version ?? '1.0.0'),
      documentation: `${base}/docs`,
      openapi: `${base}/openapi.json`,
      endpoints: Object.fromEntries(
        Object.entries(ENDPOINTS).map(([name, path]) => [name, `${base}${path}`]),
      ),
    })
  })

  app.get('/api/search', async (c) => {
    const q = required(c.req.query('q'), 'q')
    if (q.length < 2)
      throw new HttpError(400, 'invalid_parameter', 'q must be at least 2 characters', {
        details: { parameter: 'q', minimum_length: 2 },
      })
    if (q.length > MAX_QUERY_LENGTH)
      throw new HttpError(400, 'value_too_long', `q is longer than ${MAX_QUERY_LENGTH} characters`, {
        details: { parameter: 'q', maximum: MAX_QUERY_LENGTH },
      })
    const types = typesParam(c.req.query('types'))
    const limit = intParam(c.req.query('limit'), 'limit', DEFAULT_SEARCH_LIMIT, 1, MAX_SEARCH_LIMIT)
    const offset = intParam(c.req.query('offset'), 'offset', 0, 0, MAX_SEARCH_OFFSET)
    const terms = searchTerms(q)
    const body: Record<string, unknown> = { brands: [], publishers: [], properties: [], agents: [] }
    const hasMore: Record<string, boolean> = {}
    for (const category of SEARCH_CATEGORIES) {
      if (!types.includes(category) || terms.length === 0) {
        hasMore[category] = false
        continue
      }
      const hits = await repository.search.search(category, terms, limit + 1, offset)
      hasMore[category] = hits.length > limit
      body[category] = hits.slice(0, limit)
    }
    return reply(c, deps, 'search', { ...body, has_more: hasMore })
  })

  app.get('/api/manifest-refs/lookup', async (c) => {
    const domain = normalizeDomain(required(c.req.query('domain'), 'domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const type = c.req.query('type') ?? 'brand.json'
    if (!(MANIFEST_TYPES as readonly string[]).includes(type)) {
      throw new HttpError(400, 'invalid_parameter', `type must be one of ${MANIFEST_TYPES.join(', ')}`, {
        details: { parameter: 'type', valid_values: MANIFEST_TYPES },
      })
    }
    const reference =
      type === 'brand.json' ? await brandReference(c, deps, domain) : await adagentsReference(c, deps, domain)
    return reply(
      c,
      deps,
      'lookupManifestRef',
      reference ? { success: true, found: true, reference } : { success: false, found: false },
    )
  })

  return app
}

type Verification = 'pending' | 'valid' | 'invalid' | 'unreachable'

interface Reference {
  reference_type: 'url' | 'agent'
  manifest_url: string | null
  agent_url: string | null
  agent_id: string | null
  verification_status: Verification
}

const urlReference = (url: string, verification_status: Verification): Reference => ({
  reference_type: 'url',
  manifest_url: url,
  agent_url: null,
  agent_id: null,
  verification_status,
})

/**
 * The best brand manifest reference: the brand.json the registry read from the origin, else the registry-hosted
 * brand.json of a hosted brand, else the brand's agent.
 */
async function brandReference(
  c: Context,
  deps: RegistryDeps,
  domain: string,
): Promise<Reference | undefined> {
  const brand = await deps.repository.brands.getBrand(domain)
  if (!brand) return undefined
  if (brand.source === 'brand_json' && brand.document_url) {
    const unreachable = brand.status_code !== undefined && brand.status_code !== 200
    return urlReference(
      brand.document_url,
      unreachable ? 'unreachable' : brand.verified ? 'valid' : 'invalid',
    )
  }
  if (brand.source === 'hosted' && brand.document) {
    return urlReference(
      `${deps.publicUrl(c)}/hosted/${domain}/brand.json`,
      brand.verified ? 'valid' : 'pending',
    )
  }
  if (brand.brand_agent_url) {
    return {
      reference_type: 'agent',
      manifest_url: null,
      agent_url: brand.brand_agent_url,
      agent_id: null,
      verification_status: 'pending',
    }
  }
  return undefined
}

/** The adagents.json reference of a publisher: the crawled file, or the registry-hosted one. */
async function adagentsReference(
  c: Context,
  deps: RegistryDeps,
  domain: string,
): Promise<Reference | undefined> {
  const publisher = await deps.repository.publishers.getPublisher(domain)
  if (!publisher) return undefined
  if (publisher.source === 'hosted' || publisher.source === 'community') {
    return urlReference(
      `${deps.publicUrl(c)}/hosted/${domain}/adagents.json`,
      publisher.source === 'hosted' ? 'valid' : 'pending',
    )
  }
  const url = publisher.resolved_url ?? publisher.url
  if (!url) return undefined
  const status: Verification =
    publisher.valid === null
      ? 'pending'
      : publisher.valid
        ? 'valid'
        : publisher.status_code === undefined || publisher.status_code >= 500
          ? 'unreachable'
          : 'invalid'
  return urlReference(url, status)
}
