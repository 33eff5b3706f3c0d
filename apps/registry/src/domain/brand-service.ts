/**
 * Brand resolution: the stored brand (any source) unless a fresh read is asked for or nothing is stored; a
 * live read of `/.well-known/brand.json` stores what it finds (source `brand_json`, with the URL and status it
 * came from). A failed live read falls back to the stored record, with the fetch's diagnostics.
 */
import type { Crawler } from '../crawl/crawler.js'
import type { RegistryRepository } from '../db/repository.js'
import { brandSchemaErrors } from '../spec/adagents-schema.js'
import { brandFactsFrom } from './brand-json.js'
import { newId } from './ids.js'
import type { BrandRecord } from './types.js'

export interface LiveBrandJson {
  valid: boolean
  url: string
  status_code?: number
  errors: Array<{ field: string; message: string; severity: 'error' }>
  warnings: Array<{ field: string; message: string; suggestion?: string }>
}

export type BrandResolution =
  | { found: true; brand: BrandRecord; live?: LiveBrandJson }
  | { found: false; status?: number; live?: LiveBrandJson }

/** Reads brand.json for `domain` live and stores it when it names a brand for that domain. */
export async function crawlBrand(
  repository: RegistryRepository,
  crawler: Crawler,
  domain: string,
  now: number,
): Promise<BrandResolution> {
  const fetched = await crawler.fetchBrandJson(domain)
  const base = { url: fetched.url, ...(fetched.status !== undefined ? { status_code: fetched.status } : {}) }
  if (!fetched.document) {
    const live: LiveBrandJson = {
      ...base,
      valid: false,
      errors: [{ field: 'url', message: fetched.error ?? 'not found', severity: 'error' }],
      warnings: [],
    }
    return { found: false, ...(fetched.status !== undefined ? { status: fetched.status } : {}), live }
  }
  const schemaErrors = brandSchemaErrors(fetched.document)
  const live: LiveBrandJson = {
    ...base,
    valid: schemaErrors.length === 0,
    errors: schemaErrors.slice(0, 20).map((error) => ({
      field: error.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)',
      message: error.message ?? 'is invalid',
      severity: 'error' as const,
    })),
    warnings: [],
  }
  const facts = brandFactsFrom(fetched.document, domain)
  if (!facts)
    return {
      found: false,
      status: 200,
      live: {
        ...live,
        valid: false,
        errors: [
          ...live.errors,
          { field: '(root)', message: `names no brand for ${domain}`, severity: 'error' },
        ],
      },
    }
  const at = new Date(now).toISOString()
  const existing = await repository.brands.getBrand(domain)
  const brand: BrandRecord = {
    domain,
    id: existing?.id ?? newId(),
    ...facts,
    source: 'brand_json',
    document: fetched.document,
    document_url: fetched.url,
    status_code: 200,
    verified: true,
    fetched_at: at,
    created_at: existing?.created_at ?? at,
    updated_at: at,
  }
  const changed =
    !existing ||
    JSON.stringify(existing.document) !== JSON.stringify(brand.document) ||
    existing.source !== 'brand_json'
  // A hosted record (set up by the domain's verified owner) outranks what the origin serves: only report it.
  if (existing?.source === 'hosted') return { found: true, brand: existing, live }
  if (changed)
    await repository.brands.putBrand(brand, {
      editor_name: 'crawler',
      edit_summary: `read ${fetched.url}`,
      source: 'brand_json',
    })
  return { found: true, brand: changed ? brand : existing!, live }
}

/** Resolves a brand (see the module comment). */
export async function resolveBrand(
  repository: RegistryRepository,
  crawler: Crawler,
  domain: string,
  options: { fresh: boolean; now: number },
): Promise<BrandResolution> {
  const stored = await repository.brands.getBrand(domain)
  if (stored && !options.fresh) return { found: true, brand: stored }
  if (stored && stored.source === 'hosted' && !options.fresh) return { found: true, brand: stored }
  const live = await crawlBrand(repository, crawler, domain, options.now)
  if (live.found)
    return stored?.source === 'hosted'
      ? { found: true, brand: stored, ...(live.live ? { live: live.live } : {}) }
      : live
  if (stored) return { found: true, brand: stored, ...(live.live ? { live: live.live } : {}) }
  return live
}
