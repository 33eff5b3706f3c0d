/**
 * The crawler: reads `/.well-known/adagents.json` and `/.well-known/brand.json` from a domain under the
 * discovery redirect rules, size and time caps and an SSRF-safe fetch, then stores what they declare with
 * provenance (URL, status, time) and emits the change-feed events of the difference.
 *
 * A file that is gone (404/410) or invalid withdraws the publisher's authorizations; a network failure or a
 * 5xx changes nothing (a transient outage must not revoke anyone).
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { checkAddress, type SafeFetch } from '@adwire/http-signatures'
import { documentHop } from '@adwire/http-signatures/discovery'
import type { RegistryRepository } from '../db/repository.js'
import { normalizeDomain } from '../domain/names.js'
import type { DiscoveryMethod, FeedEvent, PublisherRecord } from '../domain/types.js'
import { checkAdagents, factsOf, type Issue, type Warning } from './adagents.js'
import { CrawlFetchError, fetchWithPolicy, type FetchTarget, type RefusalReason } from './fetch-policy.js'

export interface CrawlerOptions {
  readonly fetch: SafeFetch
  /** The origin a domain's files are fetched from; default `https://{domain}`. */
  readonly originFor?: (domain: string) => string
  readonly maxBytes: number
  readonly now?: () => number
  /** Local crawling: accept `http:` URLs in the files (ALLOW_PRIVATE_CRAWL). */
  readonly allowHttp?: boolean
}

/** What the crawler found at a publisher domain (also the answer of the validation endpoints). */
export interface AdagentsInspection {
  readonly domain: string
  readonly url: string
  readonly resolved_url?: string
  readonly status_code?: number
  readonly response_bytes?: number
  readonly discovery_method: DiscoveryMethod
  readonly document?: Record<string, unknown>
  readonly raw_data?: unknown
  readonly errors: Issue[]
  readonly warnings: Warning[]
  readonly valid: boolean
  /** Set when the failure is transient (network, 5xx): stored facts are kept. */
  readonly transient: boolean
}

interface Fetched {
  readonly status?: number
  readonly bytes?: number
  readonly finalUrl?: string
  readonly json?: unknown
  readonly error?: Issue
  readonly transient: boolean
}

/** How long the pre-crawl DNS check may take, milliseconds. */
const PREFLIGHT_TIMEOUT_MS = 3000

const issue = (field: string, message: string): Issue => ({ field, message, severity: 'error' })

export interface Crawler {
  inspectAdagents(domain: string): Promise<AdagentsInspection>
  /** Inspects and stores; resolves to the inspection and the feed events written. */
  crawlPublisher(
    domain: string,
    actor: string,
  ): Promise<{ inspection: AdagentsInspection; events: FeedEvent[] }>
  /** Fetches `/.well-known/brand.json`: the parsed document, or why not. */
  fetchBrandJson(
    domain: string,
  ): Promise<{ url: string; status?: number; document?: Record<string, unknown>; error?: string }>
  originFor(domain: string): string
  /**
   * Whether `domain`'s origin can be crawled at all, before a crawl is queued: `undefined` when its host resolves
   * to an address the SSRF policy allows, else why not (the fetch itself re-checks every address it connects to).
   */
  preflight(
    domain: string,
  ): Promise<{ reason: 'unresolvable' | 'private_address'; message: string } | undefined>
  /**
   * One GET of `url` through the same SSRF-safe fetch and caps, following no redirect (a 3xx is answered as
   * is): origin verification of hosted domains.
   */
  probe(url: string): Promise<Probe>
}

/** What one {@link Crawler.probe} saw. */
export interface Probe {
  readonly status?: number
  /** The parsed body of a 200 that is JSON. */
  readonly json?: unknown
  /** A 200 whose body is not JSON (or not UTF-8). */
  readonly notJson?: boolean
  /** No response: the policy refused the target or the network failed. */
  readonly failure?: { readonly reason: RefusalReason; readonly message: string }
}

/** Creates the crawler over a repository and a fetch. */
export function createCrawler(repository: RegistryRepository, options: CrawlerOptions): Crawler {
  const originFor = options.originFor ?? ((domain: string) => `https://${domain}`)
  const now = options.now ?? Date.now

  async function get(url: string, target: FetchTarget, field: string): Promise<Fetched> {
    try {
      const { response, finalUrl } = await fetchWithPolicy(options.fetch, url, target, options.maxBytes)
      const bytes = response.body.byteLength
      if (response.status !== 200) {
        return {
          status: response.status,
          bytes,
          finalUrl,
          error: issue(field, `HTTP ${response.status} from ${finalUrl}`),
          transient: response.status >= 500 || response.status === 429,
        }
      }
      try {
        return {
          status: 200,
          bytes,
          finalUrl,
          json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(response.body)) as unknown,
          transient: false,
        }
      } catch {
        return {
          status: 200,
          bytes,
          finalUrl,
          error: issue(field, `${finalUrl} is not valid JSON`),
          transient: false,
        }
      }
    } catch (error) {
      if (error instanceof CrawlFetchError) {
        return {
          error: issue(field, `${error.reason}: ${error.message}`),
          transient: error.reason === 'fetch_failed',
        }
      }
      throw error
    }
  }

  async function inspectAdagents(domain: string): Promise<AdagentsInspection> {
    const url = `${originFor(domain)}/.well-known/adagents.json`
    const first = await get(url, 'well_known', 'url')
    const base = { domain, url, discovery_method: 'direct' as DiscoveryMethod, warnings: [] as Warning[] }
    const failed = (fetched: Fetched, extra: Partial<AdagentsInspection> = {}): AdagentsInspection => ({
      ...base,
      ...(fetched.status !== undefined ? { status_code: fetched.status } : {}),
      ...(fetched.bytes !== undefined ? { response_bytes: fetched.bytes } : {}),
      ...(fetched.finalUrl && fetched.finalUrl !== url ? { resolved_url: fetched.finalUrl } : {}),
      errors: [fetched.error!],
      valid: false,
      transient: fetched.transient,
      ...extra,
    })
    if (first.error) return failed(first)
    let fetched = first
    let discovery: DiscoveryMethod = 'direct'
    const hop = documentHop('adagents', first.json)
    if (hop.kind !== 'data') {
      discovery = 'authoritative_location'
      const pointerProblems = checkAdagents(first.json, { allowHttp: options.allowHttp ?? false }).errors
      if (hop.kind === 'invalid_pointer' || pointerProblems.length > 0) {
        const error =
          pointerProblems[0] ??
          issue('authoritative_location', hop.kind === 'invalid_pointer' ? hop.message : 'invalid pointer')
        return failed({ ...first, error }, { discovery_method: discovery, raw_data: first.json })
      }
      fetched = await get(hop.location, 'authoritative_location', 'authoritative_location')
      if (fetched.error) return failed(fetched, { discovery_method: discovery })
      if (documentHop('adagents', fetched.json).kind !== 'data') {
        return failed(
          {
            ...fetched,
            error: issue(
              'authoritative_location',
              'the authoritative file points elsewhere again; one hop only',
            ),
          },
          { discovery_method: discovery },
        )
      }
    }
    const { errors, warnings } = checkAdagents(fetched.json, { allowHttp: options.allowHttp ?? false })
    const resolved = fetched.finalUrl ?? url
    return {
      ...base,
      discovery_method: discovery,
      ...(resolved !== url ? { resolved_url: resolved } : {}),
      ...(fetched.status !== undefined ? { status_code: fetched.status } : {}),
      ...(fetched.bytes !== undefined ? { response_bytes: fetched.bytes } : {}),
      ...(errors.length === 0 ? { document: fetched.json as Record<string, unknown> } : {}),
      raw_data: fetched.json,
      errors,
      warnings,
      valid: errors.length === 0,
      transient: false,
    }
  }

  async function probe(url: string): Promise<Probe> {
    try {
      const { response } = await fetchWithPolicy(options.fetch, url, 'well_known', options.maxBytes, false)
      if (response.status !== 200) return { status: response.status }
      try {
        return {
          status: 200,
          json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(response.body)) as unknown,
        }
      } catch {
        return { status: 200, notJson: true }
      }
    } catch (error) {
      if (error instanceof CrawlFetchError)
        return { failure: { reason: error.reason, message: error.message } }
      throw error
    }
  }

  async function preflight(domain: string) {
    const host = new URL(originFor(domain)).hostname.replace(/^\[|\]$/g, '')
    let addresses: string[]
    if (isIP(host)) addresses = [host]
    else {
      let timer: NodeJS.Timeout | undefined
      try {
        const found = await Promise.race([
          lookup(host, { all: true }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), PREFLIGHT_TIMEOUT_MS)
          }),
        ])
        addresses = found.map((entry) => entry.address)
      } catch {
        return { reason: 'unresolvable' as const, message: `${host} does not resolve` }
      } finally {
        clearTimeout(timer)
      }
    }
    const policy = { allowLoopback: options.allowHttp ?? false, allowPrivate: options.allowHttp ?? false }
    const allowed = addresses.filter((address) => {
      try {
        checkAddress(address, policy)
        return true
      } catch {
        return false
      }
    })
    return allowed.length > 0
      ? undefined
      : { reason: 'private_address' as const, message: `${host} resolves only to non-public addresses` }
  }

  return {
    originFor,
    inspectAdagents,
    probe,
    preflight,
    async crawlPublisher(domain, actor) {
      const inspection = await inspectAdagents(domain)
      if (inspection.transient) return { inspection, events: [] }
      const existing = await repository.publishers.getPublisher(domain)
      if (!inspection.valid && existing && existing.source !== 'adagents_json')
        return { inspection, events: [] }
      const at = new Date(now()).toISOString()
      const facts =
        inspection.valid && inspection.document
          ? factsOf(inspection.document, domain, inspection.resolved_url ?? inspection.url)
          : { properties: [], authorizations: [] }
      const contact = inspection.document?.contact as PublisherRecord['contact'] | undefined
      const events = await repository.publishers.saveSnapshot(
        {
          publisher: {
            domain,
            source: 'adagents_json',
            ...(inspection.document ? { document: inspection.document } : {}),
            url: inspection.url,
            ...(inspection.resolved_url ? { resolved_url: inspection.resolved_url } : {}),
            ...(inspection.status_code !== undefined ? { status_code: inspection.status_code } : {}),
            ...(inspection.response_bytes !== undefined ? { response_bytes: inspection.response_bytes } : {}),
            discovery_method: inspection.discovery_method,
            valid: inspection.valid,
            ...(contact && typeof contact === 'object' ? { contact } : {}),
            last_validated: at,
          },
          ...facts,
        },
        actor,
        now(),
      )
      return { inspection, events }
    },
    async fetchBrandJson(domain) {
      const url = `${originFor(domain)}/.well-known/brand.json`
      let fetched = await get(url, 'well_known', 'url')
      const hop = fetched.error ? undefined : documentHop('brand_json', fetched.json)
      if (hop?.kind === 'invalid_pointer') return { url, status: 200, error: hop.message }
      if (hop?.kind === 'pointer') {
        fetched = await get(hop.location, 'authoritative_location', 'authoritative_location')
        if (!fetched.error && documentHop('brand_json', fetched.json).kind !== 'data') {
          return { url, status: 200, error: 'brand.json points elsewhere again; one hop only' }
        }
      }
      if (fetched.error)
        return {
          url,
          ...(fetched.status !== undefined ? { status: fetched.status } : {}),
          error: fetched.error.message,
        }
      if (!fetched.json || typeof fetched.json !== 'object' || Array.isArray(fetched.json))
        return { url, status: 200, error: 'brand.json is not a JSON object' }
      return { url: fetched.finalUrl ?? url, status: 200, document: fetched.json as Record<string, unknown> }
    },
  }
}

/** `domain` when it is a valid domain name, else `undefined` (re-exported for the routes). */
export const crawlableDomain = normalizeDomain
