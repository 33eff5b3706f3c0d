/**
 * Brand Discovery: brand.json crawl requests (`POST /api/registry/brand-crawl-request`, answered 202 and run in
 * the background) and forced synchronous crawls (`POST /api/registry/brand/{domain}/force-crawl`, registry
 * administrators only: the `ADMIN_API_KEY` bearer). Both go through the crawler's SSRF-safe fetch and are
 * debounced per domain: one request per {@link BRAND_CRAWL_INTERVAL_SECONDS}, recorded durably, a second one
 * answered 429 with `retry_after` and `Retry-After`. The per-caller budget is the `crawl` rate-limit class
 * (`routes/rate-limit.ts`), shared with the adagents.json crawl requests.
 */
import { timingSafeEqual } from 'node:crypto'
import { Hono } from 'hono'
import type { Context } from 'hono'
import type { DiscoveryJobs } from '../crawl/discovery-jobs.js'
import type { OutboundKind } from '../db/discovery.js'
import { crawlBrand } from '../domain/brand-service.js'
import { normalizeDomain } from '../domain/names.js'
import type { BrandRecord } from '../domain/types.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, readBody, reply, requirePrincipal } from './http.js'

/** One brand crawl (requested or forced) per domain per this many seconds. */
export const BRAND_CRAWL_INTERVAL_SECONDS = 300

/**
 * Records a request of `kind` for `target` or throws the 429 of the debounce (with the seconds left).
 */
export async function debounce(
  deps: RegistryDeps,
  kind: OutboundKind,
  target: string,
  requestedBy: string | null,
  what: string,
): Promise<void> {
  const now = deps.now()
  const earlier = await deps.repository.discovery.claimOutbound(
    kind,
    target,
    requestedBy,
    new Date(now).toISOString(),
    new Date(now - BRAND_CRAWL_INTERVAL_SECONDS * 1000).toISOString(),
  )
  if (!earlier) return
  const retryAfter = Math.max(
    1,
    Math.ceil((Date.parse(earlier.requested_at) + BRAND_CRAWL_INTERVAL_SECONDS * 1000 - now) / 1000),
  )
  throw new HttpError(
    429,
    'rate_limited',
    `${what} for ${target} was requested less than ${BRAND_CRAWL_INTERVAL_SECONDS / 60} minutes ago; retry in ${retryAfter} s`,
    { retry_after: retryAfter, retryAfter },
    { 'Retry-After': String(retryAfter) },
  )
}

/** 400 unless `domain`'s origin resolves to an address the crawler may reach (private IP, unresolvable). */
export async function assertCrawlable(deps: RegistryDeps, domain: string): Promise<void> {
  const problem = await deps.crawler.preflight(domain)
  if (problem) {
    throw new HttpError(
      400,
      problem.reason === 'unresolvable' ? 'unresolvable_domain' : 'private_address',
      problem.message,
      {
        domain,
      },
    )
  }
}

/** Whether the request carries the administrator bearer (compared in constant time). */
export function isAdmin(c: Context, deps: RegistryDeps): boolean {
  if (!deps.adminApiKey) return false
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')
  if (!match) return false
  const given = Buffer.from(match[1]!)
  const expected = Buffer.from(deps.adminApiKey)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const sourceType = (brand: BrandRecord | undefined) =>
  !brand ? null : brand.source === 'hosted' ? null : brand.source

/** Which brand.json variant the live document is. */
function liveVariant(document: Record<string, unknown> | undefined, url: string, wellKnown: string) {
  if (!document) return null
  if (url !== wellKnown) return 'authoritative_location' as const
  if (typeof document.house === 'string') return 'house_redirect' as const
  if (Array.isArray(document.brands)) return 'house_portfolio' as const
  if (document.brand_agent && typeof document.brand_agent === 'object') return 'brand_agent' as const
  return 'brand_canonical' as const
}

/** The brand discovery routes. */
export function brandDiscoveryRoutes(deps: RegistryDeps, jobs: DiscoveryJobs): Hono {
  const app = new Hono()
  const { repository, crawler } = deps

  app.post('/api/registry/brand-crawl-request', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{ domain: string }>(c, 'requestBrandCrawl')
    const domain = normalizeDomain(body.domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    await assertCrawlable(deps, domain)
    await debounce(deps, 'brand_crawl', domain, principal.id, 'a brand.json crawl')
    jobs.crawlBrand(domain)
    return reply(c, deps, 'requestBrandCrawl', { message: 'Brand crawl request accepted', domain }, 202)
  })

  app.post('/api/registry/brand/:domain/force-crawl', async (c) => {
    // 401 without a credential, then 400 for a malformed domain, then 403 unless an administrator.
    const admin = isAdmin(c, deps)
    if (!admin) await requirePrincipal(c, deps)
    const domain = normalizeDomain(c.req.param('domain'))
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    if (!admin) {
      throw new HttpError(403, 'admin_required', 'forced brand crawls are for registry administrators')
    }
    await assertCrawlable(deps, domain)
    await debounce(deps, 'force_brand_crawl', domain, 'admin', 'a forced brand.json crawl')
    const previous = await repository.brands.getBrand(domain)
    let result: Awaited<ReturnType<typeof crawlBrand>>
    try {
      result = await crawlBrand(repository, crawler, domain, deps.now())
    } catch (error) {
      deps.log({ force_brand_crawl: domain, error: String(error) })
      await repository.discovery.finishOutbound(
        'force_brand_crawl',
        domain,
        'failed',
        new Date(deps.now()).toISOString(),
        'internal_error',
      )
      throw new HttpError(500, 'crawl_failed', `the crawl of ${domain} failed`)
    }
    const checkedAt = new Date(deps.now()).toISOString()
    const refusal = result.live?.errors.find((error) => error.message.startsWith('fetch_refused'))
    await repository.discovery.finishOutbound(
      'force_brand_crawl',
      domain,
      result.found ? 'completed' : 'failed',
      checkedAt,
      result.found ? undefined : result.live?.errors[0]?.message,
    )
    if (refusal && !result.found) {
      throw new HttpError(400, 'fetch_refused', `${domain} cannot be crawled: ${refusal.message}`, { domain })
    }
    const after = await repository.brands.getBrand(domain)
    const wellKnown = `${crawler.originFor(domain)}/.well-known/brand.json`
    return reply(c, deps, 'forceBrandCrawl', {
      domain,
      previous_source: previous?.source ?? null,
      new_source: after?.source ?? null,
      previous_source_type: sourceType(previous),
      new_source_type: sourceType(after),
      // Lower-trust stored evidence (community, enriched, stub) replaced by the live file.
      promoted:
        after?.source === 'brand_json' &&
        previous !== undefined &&
        ['community', 'enriched', 'stub'].includes(previous.source),
      brand_json_found: result.live !== undefined && result.live.status_code === 200 && result.found,
      live_variant:
        result.found && after?.source === 'brand_json'
          ? liveVariant(after.document, after.document_url ?? wellKnown, wellKnown)
          : null,
      has_manifest: Boolean(after?.manifest || after?.document),
      checked_at: checkedAt,
    })
  })

  return app
}
