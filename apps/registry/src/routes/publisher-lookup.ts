/**
 * `GET /api/registry/publisher` (public, the same answer for every caller): what a domain publishes and which
 * agents it authorizes, where its adagents.json lives (self, self_invalid, aao_hosted, self_redirected, none)
 * and what the registry found at its origin. A domain the registry has never seen gets a background crawl
 * (debounced like crawl requests) and `auto_crawl_triggered: true`.
 */
import { Hono, type Context } from 'hono'
import { compact } from '../db/json.js'
import { hostedAdagentsUrl, isRegistryHosted } from '../domain/hosted.js'
import { newId } from '../domain/ids.js'
import { normalizeDomain } from '../domain/names.js'
import type { BrandRecord, PropertyRecord, PublisherRecord } from '../domain/types.js'
import type { HostedDomain } from '../db/hosting.js'
import type { RegistryDeps } from '../deps.js'
import type { CrawlQueue } from '../crawl/queue.js'
import { CRAWL_REQUEST_INTERVAL_SECONDS } from './discovery.js'
import { HttpError, reply, required } from './http.js'

/** Above this many authorized agents the per-agent rollup is left out (`rollup_truncated`). */
export const ROLLUP_CAP = 50

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : undefined

const propertySource = (property: PropertyRecord) =>
  property.source === 'adagents_json'
    ? 'adagents_json'
    : property.source === 'discovered'
      ? 'discovered'
      : 'community'

/** Properties a brand.json declares (used only when no adagents.json property is known). */
function brandProperties(brand: BrandRecord | undefined): JsonObject[] {
  const declared = brand?.manifest?.properties
  if (!Array.isArray(declared)) return []
  return declared.filter(isObject).flatMap((property) => {
    if (typeof property.identifier !== 'string' || typeof property.type !== 'string') return []
    const relationship = property.relationship
    return [
      compact({
        type: property.type,
        name: property.identifier,
        identifiers: [
          { type: property.type === 'website' ? 'domain' : 'bundle_id', value: property.identifier },
        ],
        source: 'brand_json',
        delegation_type:
          typeof relationship === 'string' && ['direct', 'delegated', 'ad_network'].includes(relationship)
            ? relationship
            : undefined,
      }),
    ]
  })
}

function hosting(
  domain: string,
  publisher: PublisherRecord | undefined,
  hosted: HostedDomain | undefined,
  hostedUrl: string,
): JsonObject {
  const expected = `https://${domain}/.well-known/adagents.json`
  const base = {
    expected_url: expected,
    last_validated: publisher?.last_validated ?? null,
    last_http_status: publisher?.status_code ?? null,
    last_bytes: publisher?.response_bytes ?? null,
  }
  if (!publisher) return { mode: 'none', ...base, resolved_url: null }
  const pointsHere = publisher.resolved_url?.split('?')[0] === hostedUrl
  if (isRegistryHosted(publisher) || (publisher.source === 'adagents_json' && pointsHere)) {
    return {
      mode: 'aao_hosted',
      hosted_url: hostedUrl,
      ...base,
      resolved_url: hosted?.origin_verified_at || pointsHere ? hostedUrl : null,
      origin_verified_at:
        hosted?.origin_verified_at ?? (pointsHere ? (publisher.last_validated ?? null) : null),
      origin_last_checked_at: hosted?.origin_last_checked_at ?? null,
    }
  }
  // A file that fails validation is a fixable misconfiguration; no file at all is `none`.
  if (publisher.valid !== true)
    return { mode: publisher.status_code === 200 ? 'self_invalid' : 'none', ...base, resolved_url: null }
  if (publisher.discovery_method === 'authoritative_location' && publisher.resolved_url)
    return { mode: 'self_redirected', ...base, resolved_url: publisher.resolved_url }
  return { mode: 'self', ...base, resolved_url: publisher.resolved_url ?? null }
}

function formatsOf(document: JsonObject | undefined): JsonObject[] {
  const formats = Array.isArray(document?.formats) ? document.formats.filter(isObject) : []
  return formats.flatMap((format) => {
    const kind = typeof format.format_kind === 'string' ? format.format_kind : undefined
    if (!kind) return []
    const id = typeof format.format_option_id === 'string' ? format.format_option_id : undefined
    return [
      compact({
        format_option_id: id,
        display_name: typeof format.display_name === 'string' ? format.display_name : (id ?? kind),
        format_kind: kind,
        params: isObject(format.params) ? format.params : undefined,
        applies_to_property_ids: strings(format.applies_to_property_ids),
        applies_to_property_tags: strings(format.applies_to_property_tags),
        seller_preference:
          typeof format.seller_preference === 'string' ? format.seller_preference : undefined,
        experimental: typeof format.experimental === 'boolean' ? format.experimental : undefined,
      }),
    ]
  })
}

function placementsOf(document: JsonObject | undefined, formats: JsonObject[]): JsonObject[] {
  const byId = new Map(formats.map((format) => [format.format_option_id, format]))
  const placements = Array.isArray(document?.placements) ? document.placements.filter(isObject) : []
  return placements.flatMap((placement) => {
    if (typeof placement.placement_id !== 'string' || typeof placement.name !== 'string') return []
    const options = (Array.isArray(placement.format_options) ? placement.format_options : [])
      .filter(isObject)
      .flatMap((option) => {
        const ref =
          typeof option.format_option_id === 'string' ? byId.get(option.format_option_id) : undefined
        const kind = typeof option.format_kind === 'string' ? option.format_kind : ref?.format_kind
        if (typeof kind !== 'string') return []
        const params = isObject(option.params) ? option.params : (ref?.params as JsonObject | undefined)
        return [compact({ format_option_id: option.format_option_id, format_kind: kind, params })]
      })
    return [
      compact({
        placement_id: placement.placement_id,
        name: placement.name,
        description: typeof placement.description === 'string' ? placement.description : undefined,
        property_ids: strings(placement.property_ids),
        property_tags: strings(placement.property_tags),
        collection_ids: strings(placement.collection_ids),
        channels: strings(placement.channels),
        tags: strings(placement.tags),
        format_options: options.length > 0 ? options : undefined,
        source: 'adagents_json',
      }),
    ]
  })
}

function brandSummary(brand: BrandRecord | undefined): JsonObject | undefined {
  if (!brand) return undefined
  const manifest = brand.manifest ?? {}
  const logos = Array.isArray(manifest.logos) ? manifest.logos.filter(isObject) : []
  const logo = logos.find((item) => typeof item.url === 'string')?.url as string | undefined
  const colors = isObject(manifest.colors)
    ? Object.values(manifest.colors)
        .flat()
        .filter((value): value is string => typeof value === 'string' && /^#[0-9a-fA-F]{6}$/.test(value))
        .slice(0, 5)
    : []
  return compact({
    name: brand.brand_name,
    description: typeof manifest.description === 'string' ? manifest.description : undefined,
    logo_url: logo,
    colors: colors.length > 0 ? colors : undefined,
    industries: strings(manifest.industries),
  })
}

/** Queues a first crawl of a domain never seen before (at most one per domain per interval). */
async function autoCrawl(deps: RegistryDeps, queue: CrawlQueue, domain: string): Promise<boolean> {
  const now = deps.now()
  const recent = await deps.repository.requests.recentCrawlRequest(
    domain,
    new Date(now - CRAWL_REQUEST_INTERVAL_SECONDS * 1000).toISOString(),
  )
  if (recent) return false
  await deps.repository.requests.createCrawlRequest({
    id: newId(),
    domain,
    status: 'queued',
    attempts: 0,
    max_attempts: 1,
    requested_by: null,
    requested_at: new Date(now).toISOString(),
    started_at: null,
    last_attempted_at: null,
    completed_at: null,
    next_attempt_at: null,
    last_error_code: null,
  })
  queue.kick()
  return true
}

async function lookup(c: Context, deps: RegistryDeps, queue: CrawlQueue): Promise<Response> {
  const { repository } = deps
  const domain = normalizeDomain(required(c.req.query('domain'), 'domain'))
  if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
  const include = c.req.query('include')
  if (include !== undefined && include !== 'placements')
    throw new HttpError(400, 'invalid_parameter', 'include must be placements')
  const [publisher, hosted, brand, stored, rows] = await Promise.all([
    repository.publishers.getPublisher(domain),
    repository.hosting.getHostedDomain(domain),
    repository.brands.getBrand(domain),
    repository.publishers.getProperties(domain),
    repository.authorizations.forPublisher(domain),
  ])
  const triggered = publisher ? false : await autoCrawl(deps, queue, domain)
  const hostedUrl = hostedAdagentsUrl(deps.publicUrl(c), domain)
  const hostingInfo = hosting(domain, publisher, hosted, hostedUrl)

  const attested = stored.filter((property) => property.source === 'adagents_json')
  const properties: JsonObject[] = stored.map((property) => ({
    id: property.property_id,
    type: property.property_type,
    name: property.name,
    identifiers: property.identifiers,
    tags: property.tags,
    source: propertySource(property),
  }))
  if (attested.length === 0) {
    const fromBrand = brandProperties(brand)
    const known = new Set(properties.map((property) => JSON.stringify(property.identifiers)))
    properties.unshift(...fromBrand.filter((property) => !known.has(JSON.stringify(property.identifiers))))
  }

  const byAgent = new Map<string, typeof rows>()
  for (const row of rows)
    byAgent.set(row.agent_url_canonical, [...(byAgent.get(row.agent_url_canonical) ?? []), row])
  const total = stored.length
  const agents = [...byAgent.values()].map((grants, index) => {
    const publisherWide = grants.some((row) => row.property_id === null)
    const ids = new Set(grants.map((row) => row.property_id))
    const rollup =
      index < ROLLUP_CAP && attested.length > 0
        ? {
            properties_authorized: publisherWide
              ? total
              : stored.filter((property) => ids.has(property.property_id)).length,
            properties_total: total,
            publisher_wide: publisherWide && grants.every((row) => row.property_id === null),
          }
        : {}
    return compact({
      url: grants[0]!.agent_url,
      authorized_for: grants[0]!.authorized_for ?? undefined,
      source: 'adagents_json',
      ...rollup,
    })
  })

  const formats = formatsOf(publisher?.document)
  const registryHosted = hostingInfo.mode === 'aao_hosted'
  const adagentsStatus = triggered
    ? 'checking'
    : !publisher
      ? 'unknown'
      : isRegistryHosted(publisher)
        ? publisher.source === 'hosted'
          ? 'valid'
          : 'community'
        : publisher.valid === true
          ? 'valid'
          : publisher.valid === false && publisher.status_code === 200
            ? 'invalid'
            : 'unknown'
  return reply(c, deps, 'lookupPublisher', {
    domain,
    member: null,
    adagents_valid:
      publisher && isRegistryHosted(publisher) ? publisher.source === 'hosted' : (publisher?.valid ?? null),
    discovery_method: publisher?.discovery_method ?? null,
    manager_domain: publisher?.manager_domain ?? null,
    hosting: hostingInfo,
    files: {
      adagents_json: compact({
        status: adagentsStatus,
        expected_url: hostingInfo.expected_url,
        registry_url: registryHosted ? hostedUrl : undefined,
      }),
      brand_json: compact({
        status: brand ? 'present' : triggered ? 'checking' : 'unknown',
        name: brand?.brand_name,
      }),
    },
    properties,
    authorized_agents: agents,
    ...compact({
      brand: brandSummary(brand),
      formats: formats.length > 0 ? formats : undefined,
      placements: include === 'placements' ? placementsOf(publisher?.document, formats) : undefined,
      rollup_truncated:
        agents.length > ROLLUP_CAP ? { cap: ROLLUP_CAP, total_agents: agents.length } : undefined,
      auto_crawl_triggered: triggered || undefined,
    }),
  })
}

/** The publisher lookup route. */
export function publisherLookupRoutes(deps: RegistryDeps, queue: CrawlQueue): Hono {
  const app = new Hono()
  app.get('/api/registry/publisher', (c) => lookup(c, deps, queue))
  return app
}
