/** Brand Resolution: resolve (single, bulk), brand.json, registry list, find, history, enrich, save, setup. */
import { Hono } from 'hono'
import { compact } from '../db/json.js'
import { resolveBrand, type LiveBrandJson } from '../domain/brand-service.js'
import { newId } from '../domain/ids.js'
import { normalizeDomain } from '../domain/names.js'
import type { BrandRecord } from '../domain/types.js'
import { brandOwner, requireOwnerOrUnowned } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import {
  boolParam,
  HttpError,
  intParam,
  readBody,
  reply,
  requireOrg,
  requirePrincipal,
  required,
} from './http.js'
import { mapLimit } from './concurrency.js'

/** The wire `ResolvedBrand` of a stored brand. */
export function resolvedBrand(brand: BrandRecord, live?: LiveBrandJson): Record<string, unknown> {
  return compact({
    canonical_id: brand.id,
    canonical_domain: brand.domain,
    brand_name: brand.brand_name,
    names: brand.names,
    keller_type: brand.keller_type,
    parent_brand: brand.parent_brand,
    house_domain: brand.house_domain,
    house_name: brand.house_name,
    relationship_trust: brand.house_domain
      ? brand.house_domain === brand.domain
        ? 'standalone'
        : 'inline'
      : 'standalone',
    brand_agent_url: brand.brand_agent_url,
    brand_manifest: brand.manifest,
    source: brand.source,
    live_brand_json: live,
  })
}

const domainParam = (value: string | undefined): string => {
  const domain = normalizeDomain(required(value, 'domain'))
  if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
  return domain
}

/** The brand routes. */
export function brandRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository, crawler } = deps

  app.get('/api/brands/resolve', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const result = await resolveBrand(repository, crawler, domain, {
      fresh: boolParam(c.req.query('fresh'), 'fresh'),
      now: deps.now(),
    })
    if (!result.found) {
      throw new HttpError(404, 'brand_not_found', `no brand is known for ${domain}`, {
        domain,
        ...(result.status !== undefined ? { file_status: result.status } : {}),
      })
    }
    return reply(c, deps, 'resolveBrand', resolvedBrand(result.brand, result.live))
  })

  app.post('/api/brands/resolve/bulk', async (c) => {
    const body = await readBody<{ domains: string[] }>(c, 'resolveBrandsBulk', 16 * 1024)
    const unique = [...new Set(body.domains)]
    const results: Record<string, unknown> = {}
    await mapLimit(unique, 4, async (input) => {
      const domain = normalizeDomain(input)
      if (!domain) return void (results[input] = null)
      const result = await resolveBrand(repository, crawler, domain, { fresh: false, now: deps.now() })
      results[input] = result.found ? resolvedBrand(result.brand) : null
    })
    return reply(c, deps, 'resolveBrandsBulk', { results })
  })

  app.get('/api/brands/brand-json', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const result = await resolveBrand(repository, crawler, domain, {
      fresh: boolParam(c.req.query('fresh'), 'fresh'),
      now: deps.now(),
    })
    if (!result.found || !result.brand.document)
      throw new HttpError(404, 'brand_json_not_found', `no brand.json is known for ${domain}`, { domain })
    return reply(
      c,
      deps,
      'getBrandJson',
      compact({
        domain,
        url: result.brand.document_url ?? `https://${domain}/.well-known/brand.json`,
        data: result.brand.document,
        live_brand_json: result.live,
      }),
    )
  })

  app.get('/api/brands/registry', async (c) => {
    const source = c.req.query('source')
    if (source && !['hosted', 'brand_json', 'enriched', 'community', 'stub'].includes(source)) {
      throw new HttpError(
        400,
        'invalid_parameter',
        'source must be one of hosted, brand_json, enriched, community, stub',
      )
    }
    const { brands } = await repository.brands.listBrands({
      ...(c.req.query('search') ? { search: c.req.query('search')! } : {}),
      ...(source ? { source: source as BrandRecord['source'] } : {}),
      limit: intParam(c.req.query('limit'), 'limit', 100, 1, 1000),
      offset: intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    })
    const stats = await repository.brands.brandStats()
    return reply(c, deps, 'listBrands', {
      brands: brands.map((brand) =>
        compact({
          domain: brand.domain,
          brand_name: brand.brand_name,
          source: brand.source,
          has_manifest: brand.manifest !== undefined,
          verified: brand.verified,
          house_domain: brand.house_domain,
          keller_type: brand.keller_type,
        }),
      ),
      stats,
    })
  })

  app.get('/api/brands/find', async (c) => {
    const q = required(c.req.query('q'), 'q')
    if (q.length < 2) throw new HttpError(400, 'invalid_parameter', 'q must be at least 2 characters')
    const brands = await repository.brands.findBrands(q, intParam(c.req.query('limit'), 'limit', 10, 1, 50))
    return reply(c, deps, 'findBrand', {
      results: brands.map((brand) =>
        compact({
          domain: brand.domain,
          canonical_domain: brand.domain,
          brand_name: brand.brand_name,
          house_domain: brand.house_domain,
          keller_type: brand.keller_type,
          parent_brand: brand.parent_brand,
          brand_agent_url: brand.brand_agent_url,
          source: brand.source,
        }),
      ),
    })
  })

  app.get('/api/brands/history', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const history = await repository.brands.history(
      'brand',
      domain,
      intParam(c.req.query('limit'), 'limit', 20, 1, 100),
      intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    )
    if (history.total === 0 && !(await repository.brands.getBrand(domain)))
      throw new HttpError(404, 'brand_not_found', `no history for ${domain}`, { domain })
    return reply(c, deps, 'getBrandHistory', {
      domain,
      total: history.total,
      revisions: history.revisions.map((revision) => ({ ...revision, is_rollback: false })),
    })
  })

  app.get('/api/brands/enrich', async (c) => {
    const domain = domainParam(c.req.query('domain'))
    const brand = await repository.brands.getBrand(domain)
    const manifest = brand
      ? compact({ ...(brand.manifest ?? {}), name: brand.brand_name, url: `https://${domain}` })
      : undefined
    return reply(
      c,
      deps,
      'enrichBrand',
      compact({
        success: true,
        domain,
        cached: brand !== undefined,
        manifest,
        source_type: brand && brand.source !== 'hosted' && brand.source !== 'stub' ? brand.source : undefined,
      }),
    )
  })

  app.post('/api/brands/save', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const orgId = requireOrg(principal)
    const body = await readBody<{
      domain: string
      brand_name: string
      brand_manifest?: Record<string, unknown>
    }>(c, 'saveBrand')
    const domain = normalizeDomain(body.domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    if (body.brand_name.trim() === '') throw new HttpError(400, 'invalid_request', 'brand_name is empty')
    const existing = await repository.brands.getBrand(domain)
    if (existing?.source === 'brand_json')
      throw new HttpError(
        409,
        'brand_authoritative',
        `${domain} publishes its own brand.json; edit that file instead`,
        { domain },
      )
    // The owner decides (auth/authorize.ts): a hosted brand is its domain's, a community brand its first saver's.
    requireOwnerOrUnowned(orgId, await brandOwner(deps, domain, existing), 'brand_not_owned', domain, {
      domain,
    })
    if (existing?.source === 'hosted')
      throw new HttpError(
        409,
        'brand_hosted',
        `the registry hosts ${domain}'s brand.json for your organization; edit it with POST /api/brands/setup-my-brand`,
        { domain },
      )
    const at = new Date(deps.now()).toISOString()
    const brand: BrandRecord = {
      ...(existing ?? { domain, id: newId(), verified: false, created_at: at }),
      brand_name: body.brand_name,
      source: 'community',
      owner_org_id: orgId,
      ...(body.brand_manifest ? { manifest: body.brand_manifest } : {}),
      updated_at: at,
    } as BrandRecord
    const revision = await repository.brands.putBrand(brand, {
      editor_name: principal.id,
      edit_summary: existing ? 'updated' : 'created',
      source: 'community',
    })
    return reply(c, deps, 'saveBrand', {
      success: true,
      message: existing ? 'Brand updated' : 'Brand created',
      domain,
      id: brand.id,
      revision_number: revision,
    })
  })

  return app
}
