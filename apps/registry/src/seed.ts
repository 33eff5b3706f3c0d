/**
 * The demo world loaded into an empty database (`SEED=0` disables it): a few brands, two publishers with
 * adagents.json files and the sales agents they authorize, so `curl` gives real answers at once. Everything
 * lives under `.example` (RFC 2606) and is marked as seeded in the feed (actor `seed`).
 */
import { factsOf } from './crawl/adagents.js'
import { addRevision } from './db/brands.js'
import type { RegistryRepository } from './db/repository.js'
import { newId } from './domain/ids.js'
import type { BrandRecord } from './domain/types.js'
import { adagentsSchemaErrors, brandSchemaErrors } from './spec/adagents-schema.js'

/** The brand.json the registry hosts for a demo brand (served at `/hosted/{domain}/brand.json`). */
export function demoBrandJson(brand: DemoBrand, at: string): Record<string, unknown> {
  const colors = (brand.manifest as { colors?: Record<string, string> } | undefined)?.colors
  return {
    $schema: 'https://adcontextprotocol.org/schemas/3.1.19/brand.json',
    house: { domain: brand.house_domain ?? brand.domain, name: brand.house_name ?? brand.brand_name },
    brands: [
      {
        id: brand.domain.split('.')[0]!.replaceAll('-', '_'),
        names: [{ en: brand.brand_name }],
        keller_type: brand.keller_type ?? 'master',
        url: `https://${brand.domain}`,
        ...(colors ? { colors } : {}),
      },
    ],
    last_updated: at,
  }
}

export const DEMO_AGENTS = {
  network: 'https://sales.adnetwork.example/mcp',
  pinecrest: 'https://ads.pinecrest-news.example/a2a',
} as const

type DemoBrand = Pick<
  BrandRecord,
  'domain' | 'brand_name' | 'keller_type' | 'house_domain' | 'house_name' | 'manifest'
>

const brands: DemoBrand[] = [
  {
    domain: 'acme-outdoor.example',
    brand_name: 'Acme Outdoor',
    keller_type: 'master',
    house_domain: 'acme-outdoor.example',
    house_name: 'Acme Outdoor Group',
    manifest: {
      name: 'Acme Outdoor',
      url: 'https://acme-outdoor.example',
      colors: { primary: '#1B5E20', secondary: '#FFC107' },
    },
  },
  {
    domain: 'trailhead.example',
    brand_name: 'Trailhead Boots',
    keller_type: 'sub_brand',
    house_domain: 'acme-outdoor.example',
    house_name: 'Acme Outdoor Group',
    manifest: { name: 'Trailhead Boots', url: 'https://trailhead.example' },
  },
  {
    domain: 'northwind-foods.example',
    brand_name: 'Northwind Foods',
    keller_type: 'independent',
    manifest: {
      name: 'Northwind Foods',
      url: 'https://northwind-foods.example',
      colors: { primary: '#0D47A1' },
    },
  },
]

/** The demo publishers' adagents.json files, by domain. */
export const DEMO_ADAGENTS: Record<string, Record<string, unknown>> = {
  'pinecrest-news.example': {
    $schema: 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json',
    contact: { name: 'Pinecrest News ad operations', email: 'ads@pinecrest-news.example' },
    properties: [
      {
        property_id: 'pinecrest_web',
        property_type: 'website',
        name: 'Pinecrest News',
        identifiers: [{ type: 'domain', value: 'pinecrest-news.example' }],
        tags: ['news', 'premium'],
      },
      {
        property_id: 'pinecrest_sports',
        property_type: 'website',
        name: 'Pinecrest Sports',
        identifiers: [{ type: 'domain', value: 'sports.pinecrest-news.example' }],
        tags: ['sports'],
      },
      {
        property_id: 'pinecrest_app',
        property_type: 'mobile_app',
        name: 'Pinecrest News app',
        identifiers: [{ type: 'bundle_id', value: 'example.pinecrest.news' }],
        tags: ['news'],
      },
    ],
    authorized_agents: [
      {
        url: DEMO_AGENTS.pinecrest,
        authorized_for: 'All Pinecrest inventory, sold directly',
        authorization_type: 'property_tags',
        property_tags: ['news', 'sports'],
      },
      {
        url: DEMO_AGENTS.network,
        authorized_for: 'Premium news display',
        authorization_type: 'property_ids',
        property_ids: ['pinecrest_web'],
      },
    ],
    last_updated: '2026-01-15T00:00:00Z',
  },
  'riverside-radio.example': {
    $schema: 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json',
    properties: [
      {
        property_id: 'riverside_stream',
        property_type: 'radio',
        name: 'Riverside Radio stream',
        identifiers: [{ type: 'domain', value: 'listen.riverside-radio.example' }],
        tags: ['audio'],
      },
      {
        property_id: 'riverside_podcasts',
        property_type: 'podcast',
        name: 'Riverside podcasts',
        identifiers: [{ type: 'domain', value: 'podcasts.riverside-radio.example' }],
        tags: ['audio', 'podcast'],
      },
    ],
    authorized_agents: [
      {
        url: DEMO_AGENTS.network,
        authorized_for: 'All audio inventory',
        authorization_type: 'property_tags',
        property_tags: ['audio'],
      },
    ],
    last_updated: '2026-01-15T00:00:00Z',
  },
}

/** Loads the demo world when the database holds no brand and no publisher; resolves to whether it did. */
export async function seedDemoWorld(
  repository: RegistryRepository,
  now: number = Date.now(),
): Promise<boolean> {
  const [anyBrand, anyPublisher] = await Promise.all([
    repository.brands.listBrands({ limit: 1, offset: 0 }),
    repository.publishers.listPublishers({ limit: 1, offset: 0 }),
  ])
  if (anyBrand.total > 0 || anyPublisher.total > 0) return false
  const at = new Date(now).toISOString()
  for (const brand of brands) {
    const document = demoBrandJson(brand, at)
    const problems = brandSchemaErrors(document)
    if (problems.length > 0)
      throw new Error(`demo brand.json of ${brand.domain}: ${JSON.stringify(problems)}`)
    await repository.brands.putBrand(
      {
        ...brand,
        id: newId(),
        source: 'hosted',
        document,
        document_url: `https://${brand.domain}/.well-known/brand.json`,
        verified: true,
        created_at: at,
        updated_at: at,
      },
      { editor_name: 'seed', edit_summary: 'demo world', source: 'hosted' },
    )
  }
  for (const [domain, document] of Object.entries(DEMO_ADAGENTS)) {
    const url = `https://${domain}/.well-known/adagents.json`
    // Counted valid only when it is: the same schema check a crawl applies.
    const valid = adagentsSchemaErrors(document).length === 0
    await repository.publishers.saveSnapshot(
      {
        publisher: {
          domain,
          source: 'adagents_json',
          document,
          url,
          status_code: 200,
          discovery_method: 'direct',
          valid,
          ...(document.contact ? { contact: document.contact as { name: string; email: string } } : {}),
          last_validated: at,
        },
        ...factsOf(document, domain, url),
      },
      'seed',
      now,
    )
    await repository.driver.transaction((tx) =>
      addRevision(
        tx,
        'property',
        domain,
        { editor_name: 'seed', edit_summary: 'demo world', source: 'adagents_json' },
        at,
      ),
    )
  }
  return true
}
