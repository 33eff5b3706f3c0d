/**
 * Registry-hosted domains, hosted brand.json, the publisher lookup and the listAgents filters, on SQLite and
 * PostgreSQL: real origin sites on 127.0.0.1 serve the pointer files the registry verifies, every response is
 * checked against the OpenAPI document (`api`).
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_AGENTS } from './seed.js'
import {
  api,
  startSite,
  startTestRegistry,
  type Backend,
  type Site,
  type TestRegistry,
} from './testing/registry.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

const SELF_HOSTED = {
  properties: [
    {
      property_id: 'web',
      property_type: 'website',
      name: 'Fresh Pub',
      identifiers: [{ type: 'domain', value: 'fresh-pub.test' }],
      tags: ['news'],
    },
  ],
  formats: [{ format_option_id: 'mrec', format_kind: 'image', params: { width: 300, height: 250 } }],
  placements: [
    {
      placement_id: 'top',
      name: 'Top slot',
      property_ids: ['web'],
      format_options: [{ format_option_id: 'mrec' }],
    },
  ],
  authorized_agents: [
    {
      url: 'https://sales.fresh.test/mcp',
      authorized_for: 'all',
      authorization_type: 'publisher_properties',
      publisher_properties: [{ publisher_domain: 'fresh-pub.test', selection_type: 'all' }],
    },
  ],
  last_updated: '2026-06-01T00:00:00Z',
}

describe.each(backends)('hosted domains and publisher lookup on %s', (name, backend) => {
  let test: TestRegistry
  let origin: Site
  let fresh: Site
  let orgA: { id: string; apiKey: string }
  let orgB: { id: string; apiKey: string }
  const registry = () => test.registry
  const verify = (token: string, domain = 'hosted-pub.test') =>
    api(registry(), 'verifyHostedPropertyOrigin', `/api/properties/hosted/${domain}/verify-origin`, {
      method: 'POST',
      token,
    })

  beforeAll(async () => {
    if (!backend) return
    ;[origin, fresh] = await Promise.all([startSite(), startSite()])
    fresh.serveJson('/.well-known/adagents.json', SELF_HOSTED)
    test = await startTestRegistry(backend, {
      origins: {
        'hosted-pub.test': origin.origin,
        'fresh-pub.test': fresh.origin,
        'never-seen.test': origin.origin,
      },
    })
    orgA = await registry().createOrg('Publisher A')
    orgB = await registry().createOrg('Squatter B')
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await Promise.all([origin?.close(), fresh?.close()])
  })

  it.skipIf(!backend)(
    `claims a domain, verifies the origin pointer and binds it to the claim's org (${name})`,
    async () => {
      expect((await verify(orgA.apiKey)).status).toBe(404)
      expect(
        (
          await api(registry(), 'verifyHostedPropertyOrigin', '/api/properties/hosted/x/verify-origin', {
            method: 'POST',
            token: orgA.apiKey,
          })
        ).status,
      ).toBe(400)
      expect(
        (
          await api(registry(), 'claimHostedPropertyDomain', '/api/properties/hosted/hosted-pub.test/claim', {
            method: 'POST',
          })
        ).status,
      ).toBe(401)
      const saved = await api(registry(), 'saveProperty', '/api/properties/save', {
        token: orgA.apiKey,
        body: {
          publisher_domain: 'hosted-pub.test',
          properties: [{ type: 'website', name: 'Hosted Pub' }],
          contact: { name: 'Ops', email: 'ops@hosted-pub.test' },
        },
      })
      expect(saved.status).toBe(200)

      // The origin serves nothing yet: a permanent failure.
      expect((await verify(orgA.apiKey)).body).toMatchObject({ verified: false, reason: 'not_found' })

      const claim = await api(
        registry(),
        'claimHostedPropertyDomain',
        '/api/properties/hosted/hosted-pub.test/claim',
        { method: 'POST', token: orgA.apiKey },
      )
      expect(claim.status).toBe(200)
      const location = new URL(claim.body.authoritative_location)
      expect(`${location.origin}${location.pathname}`).toBe(
        `${registry().url}/hosted/hosted-pub.test/adagents.json`,
      )
      expect(location.searchParams.get('adcp_claim')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
      expect(claim.body.instructions).toContain('verify-origin')

      // The hosted file the pointer names is served, identity only.
      const hostedFile = (await (await fetch(location)).json()) as Record<string, unknown>
      expect(hostedFile).toMatchObject({
        authorized_agents: [],
        contact: { name: 'Ops', email: 'ops@hosted-pub.test' },
        properties: [{ property_type: 'website', name: 'Hosted Pub' }],
      })

      origin.files.set('/.well-known/adagents.json', { status: 200, body: 'not json' })
      expect((await verify(orgA.apiKey)).body).toMatchObject({ verified: false, reason: 'invalid_json' })
      origin.serveJson('/.well-known/adagents.json', { authorized_agents: [] })
      expect((await verify(orgA.apiKey)).body.reason).toBe('no_authoritative_location')
      origin.serveJson('/.well-known/adagents.json', {
        authoritative_location: 'https://elsewhere.test/adagents.json',
      })
      expect((await verify(orgA.apiKey)).body.reason).toBe('authoritative_location_mismatch')
      origin.serveJson('/.well-known/adagents.json', { error: 'down' }, 503)
      expect((await verify(orgA.apiKey)).body).toMatchObject({ verified: false, reason: 'transient' })

      // The real pointer: verification by ANOTHER caller still binds to the token's org (A).
      origin.serveJson('/.well-known/adagents.json', {
        authoritative_location: claim.body.authoritative_location,
      })
      const verified = await verify(orgB.apiKey)
      expect(verified.body).toMatchObject({
        verified: true,
        reason: 'authoritative_location_pointer',
        bound_org_id: orgA.id,
      })
      expect(Date.parse(verified.body.checked_at)).not.toBeNaN()

      // Locked: B cannot claim it; B's own token on the origin would not replace the owner.
      const refused = await api(
        registry(),
        'claimHostedPropertyDomain',
        '/api/properties/hosted/hosted-pub.test/claim',
        { method: 'POST', token: orgB.apiKey },
      )
      expect(refused).toMatchObject({ status: 409, body: { error: 'domain_locked' } })

      const resolved = await api(
        registry(),
        'resolveProperty',
        '/api/properties/resolve?domain=hosted-pub.test',
      )
      expect(resolved.body).toMatchObject({ source: 'hosted', verified: true })
      const feed = await api(
        registry(),
        'getRegistryFeed',
        '/api/registry/feed?types=publisher.adagents_changed',
        {
          token: orgA.apiKey,
        },
      )
      expect(
        feed.body.events.some(
          (event: { entity_id: string; payload: { changed_fields?: string[] } }) =>
            event.entity_id === 'hosted-pub.test' &&
            event.payload.changed_fields?.includes('origin_verified'),
        ),
      ).toBe(true)

      const lookup = await api(
        registry(),
        'lookupPublisher',
        '/api/registry/publisher?domain=hosted-pub.test',
      )
      expect(lookup.body.hosting).toMatchObject({
        mode: 'aao_hosted',
        hosted_url: `${registry().url}/hosted/hosted-pub.test/adagents.json`,
        expected_url: 'https://hosted-pub.test/.well-known/adagents.json',
        origin_verified_at: verified.body.checked_at,
      })
      expect(lookup.body.files.adagents_json).toMatchObject({
        status: 'valid',
        registry_url: `${registry().url}/hosted/hosted-pub.test/adagents.json`,
      })
      expect(lookup.body.properties).toEqual([
        expect.objectContaining({ name: 'Hosted Pub', source: 'community' }),
      ])
    },
  )

  it.skipIf(!backend)(`sets up a hosted brand.json only for the owning organization (${name})`, async () => {
    const setup = (token: string | undefined, body: object) =>
      api(registry(), 'setupMyBrand', '/api/brands/setup-my-brand', { ...(token ? { token } : {}), body })
    expect((await setup(undefined, { domain: 'hosted-pub.test', brand_name: 'Hosted' })).status).toBe(401)
    expect((await setup(orgB.apiKey, { domain: 'hosted-pub.test', brand_name: 'Hosted' })).status).toBe(403)
    expect((await setup(orgA.apiKey, { domain: 'unclaimed.test', brand_name: 'Nope' })).status).toBe(403)
    expect((await setup(orgA.apiKey, { domain: 'not a domain', brand_name: 'X' })).status).toBe(400)
    expect(
      (
        await setup(orgA.apiKey, {
          domain: 'hosted-pub.test',
          brand_name: 'Hosted',
          logo_url: 'http://cdn.test/logo.svg',
        })
      ).body.error,
    ).toBe('invalid_logo_url')
    expect(
      (await setup(orgA.apiKey, { domain: 'hosted-pub.test', brand_name: 'H', brand_color: 'red' })).status,
    ).toBe(400)
    const badDraft = await setup(orgA.apiKey, {
      domain: 'hosted-pub.test',
      brand_name: 'Hosted',
      brand_json: {
        house: { domain: 'hosted-pub.test', name: 'Hosted' },
        brands: [
          {
            id: 'hosted',
            names: [{ en: 'Hosted' }],
            url: 'https://hosted-pub.test',
            logos: [{ url: 'https://user:pw@cdn.test/logo.png' }],
          },
        ],
      },
    })
    expect(badDraft).toMatchObject({ status: 400, body: { error: 'invalid_brand_json' } })

    const done = await setup(orgA.apiKey, {
      domain: 'hosted-pub.test',
      brand_name: 'Hosted Pub Media',
      logo_url: 'https://cdn.hosted-pub.test/logo.svg',
      brand_color: '#112233',
    })
    expect(done.status).toBe(200)
    const hostedUrl = `${registry().url}/hosted/hosted-pub.test/brand.json`
    expect(done.body).toMatchObject({
      domain: 'hosted-pub.test',
      has_brand_json: true,
      hosted_brand_json_url: hostedUrl,
    })
    expect(JSON.parse(done.body.pointer_snippet)).toMatchObject({ authoritative_location: hostedUrl })

    const served = (await (await fetch(hostedUrl)).json()) as { brands: Array<Record<string, unknown>> }
    expect(served.brands[0]).toMatchObject({
      names: [{ en: 'Hosted Pub Media' }],
      logos: [{ url: 'https://cdn.hosted-pub.test/logo.svg' }],
      colors: { primary: '#112233' },
    })
    const resolved = await api(registry(), 'resolveBrand', '/api/brands/resolve?domain=hosted-pub.test')
    expect(resolved.body).toMatchObject({ brand_name: 'Hosted Pub Media', source: 'hosted' })
    // The origin now carries the brand pointer: a fresh read follows it but the hosted record stays.
    origin.serveJson('/.well-known/brand.json', JSON.parse(done.body.pointer_snippet))
    const fresh = await api(
      registry(),
      'resolveBrand',
      '/api/brands/resolve?domain=hosted-pub.test&fresh=true',
    )
    expect(fresh.body).toMatchObject({ source: 'hosted', live_brand_json: { valid: true } })
    const document = await api(registry(), 'getBrandJson', '/api/brands/brand-json?domain=hosted-pub.test')
    expect(document.body.url).toBe(hostedUrl)
    const lookup = await api(registry(), 'lookupPublisher', '/api/registry/publisher?domain=hosted-pub.test')
    expect(lookup.body.brand).toMatchObject({ name: 'Hosted Pub Media', colors: ['#112233'] })
    expect(lookup.body.files.brand_json).toEqual({ status: 'present', name: 'Hosted Pub Media' })
  })

  it.skipIf(!backend)(`demotes a verified domain when the origin pointer is gone (${name})`, async () => {
    origin.files.delete('/.well-known/adagents.json')
    const result = await verify(orgA.apiKey)
    expect(result.body).toMatchObject({ verified: false, reason: 'not_found' })
    const lookup = await api(registry(), 'lookupPublisher', '/api/registry/publisher?domain=hosted-pub.test')
    expect(lookup.body.hosting).toMatchObject({ mode: 'aao_hosted', origin_verified_at: null })
    expect(lookup.body.hosting.origin_last_checked_at).toBe(result.body.checked_at)
    expect(lookup.body.files.adagents_json.status).toBe('community')
    expect(
      (await api(registry(), 'resolveProperty', '/api/properties/resolve?domain=hosted-pub.test')).body
        .verified,
    ).toBe(false)
  })

  it.skipIf(!backend)(`looks up self-hosted and unknown publishers (${name})`, async () => {
    const seeded = await api(
      registry(),
      'lookupPublisher',
      '/api/registry/publisher?domain=pinecrest-news.example',
    )
    expect(seeded.body).toMatchObject({
      domain: 'pinecrest-news.example',
      member: null,
      adagents_valid: true,
      discovery_method: 'direct',
      hosting: { mode: 'self', expected_url: 'https://pinecrest-news.example/.well-known/adagents.json' },
      files: { adagents_json: { status: 'valid' } },
    })
    expect(seeded.body.properties).toHaveLength(3)
    expect(seeded.body.properties.every((p: { source: string }) => p.source === 'adagents_json')).toBe(true)
    const network = seeded.body.authorized_agents.find((a: { url: string }) => a.url === DEMO_AGENTS.network)
    expect(network).toMatchObject({
      source: 'adagents_json',
      properties_authorized: 1,
      properties_total: 3,
      publisher_wide: false,
    })
    expect(seeded.body.placements).toBeUndefined()

    expect((await api(registry(), 'lookupPublisher', '/api/registry/publisher')).status).toBe(400)
    expect(
      (await api(registry(), 'lookupPublisher', '/api/registry/publisher?domain=a.example&include=all'))
        .status,
    ).toBe(400)

    const first = await api(
      registry(),
      'lookupPublisher',
      '/api/registry/publisher?domain=fresh-pub.test&include=placements',
    )
    expect(first.body).toMatchObject({
      hosting: { mode: 'none' },
      adagents_valid: null,
      auto_crawl_triggered: true,
      files: { adagents_json: { status: 'checking' } },
      properties: [],
      authorized_agents: [],
      placements: [],
    })
    await registry().crawlsIdle()
    const second = await api(
      registry(),
      'lookupPublisher',
      '/api/registry/publisher?domain=fresh-pub.test&include=placements',
    )
    expect(second.body.auto_crawl_triggered).toBeUndefined()
    expect(second.body).toMatchObject({
      adagents_valid: true,
      hosting: { mode: 'self', last_http_status: 200 },
      authorized_agents: [
        {
          url: 'https://sales.fresh.test/mcp',
          properties_authorized: 1,
          properties_total: 1,
          publisher_wide: true,
        },
      ],
      formats: [{ format_option_id: 'mrec', display_name: 'mrec', format_kind: 'image' }],
      placements: [
        {
          placement_id: 'top',
          name: 'Top slot',
          property_ids: ['web'],
          source: 'adagents_json',
          format_options: [
            { format_option_id: 'mrec', format_kind: 'image', params: { width: 300, height: 250 } },
          ],
        },
      ],
    })

    // A domain whose origin has no file: crawled once, reported as `none`, not crawled again at once.
    await api(registry(), 'lookupPublisher', '/api/registry/publisher?domain=never-seen.test')
    await registry().crawlsIdle()
    const none = await api(registry(), 'lookupPublisher', '/api/registry/publisher?domain=never-seen.test')
    expect(none.body).toMatchObject({ hosting: { mode: 'none', last_http_status: 404 } })
    expect(none.body.auto_crawl_triggered).toBeUndefined()
  })

  it.skipIf(!backend)(`filters agents, and refuses the filters it cannot answer (${name})`, async () => {
    const all = await api(registry(), 'listAgents', '/api/registry/agents?properties=true')
    expect(all.body.count).toBeGreaterThanOrEqual(2)
    const network = all.body.agents.find((agent: { url: string }) => agent.url === DEMO_AGENTS.network)
    expect(network.property_summary).toMatchObject({ total_count: 3, publisher_count: 2 })
    expect((await api(registry(), 'listAgents', '/api/registry/agents?type=creative')).body).toEqual({
      agents: [],
      count: 0,
    })
    const health = await api(registry(), 'listAgents', '/api/registry/agents?health=true')
    expect(health).toMatchObject({
      status: 400,
      body: { error: 'unsupported_filter', unsupported: ['health'] },
    })
    expect(health.body.message).toContain('health')
    const several = await api(
      registry(),
      'listAgents',
      '/api/registry/agents?metric_id=attention&format_kind=video_hosted&verified=true',
    )
    expect(several.body.unsupported).toEqual(['metric_id', 'format_kind', 'verified'])
    expect((await api(registry(), 'listAgents', '/api/registry/agents?properties=yes')).status).toBe(400)
  })
})

if (!postgresUrl) console.warn('hosted domains on postgres skipped: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)')
