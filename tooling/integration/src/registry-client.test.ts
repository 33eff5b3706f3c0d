/**
 * @adwire/registry-client against the real registry service (apps/registry), on SQLite and PostgreSQL, with
 * real publisher and brand sites on 127.0.0.1: resolve, bulk resolve, authorization checks, expand, adagents.json
 * validation, the change feed across a crawl that changes an authorization, API keys, the OAuth 2.1 flow, 401/403,
 * the publisher lookup and the hosted-domain flow (claim, origin verification, hosted brand.json).
 *
 * The service is imported by relative path (the client must not depend on the private app, and this package
 * cannot gain a workspace dependency without an install); vitest runs the TypeScript sources.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAdmin } from '../../../apps/registry/src/auth/admin-cli.js'
import { parseEnv, startRegistry, type RunningRegistry } from '../../../apps/registry/src/service.js'
import {
  createRegistryClient,
  CursorExpiredError,
  followFeed,
  RegistryError,
  type RegistryFeedEvent,
} from '../../../packages/registry-client/src/index.js'

const SALES = 'https://sales.example/mcp'
const RESELLER = 'https://reseller.example/mcp'

/** A site on 127.0.0.1 serving mutable files. */
async function startSite(): Promise<{
  origin: string
  files: Map<string, string>
  close(): Promise<void>
}> {
  const files = new Map<string, string>()
  const server: Server = createServer((req, res) => {
    const body = files.get((req.url ?? '/').split('?')[0]!)
    if (body === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    else res.writeHead(200, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    files,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const adagents = (agents: Array<{ url: string; tags: string[] }>) =>
  JSON.stringify({
    authorized_agents: agents.map((agent) => ({
      url: agent.url,
      authorized_for: `inventory tagged ${agent.tags.join(', ')}`,
      authorization_type: 'property_tags',
      property_tags: agent.tags,
    })),
    properties: [
      {
        property_id: 'news_site',
        property_type: 'website',
        name: 'News Example',
        identifiers: [{ type: 'domain', value: 'news.example' }],
        tags: ['news'],
      },
      {
        property_id: 'news_app',
        property_type: 'mobile_app',
        name: 'News App',
        identifiers: [{ type: 'ios_bundle', value: 'com.news.app' }],
        tags: ['apps'],
      },
    ],
  })

const brandJson = JSON.stringify({
  house: { domain: 'acme.example', name: 'Acme Holdings' },
  brands: [{ id: 'acme', names: [{ en: 'Acme' }], url: 'https://acme.example', keller_type: 'master' }],
})

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

const pgUrl = await resolveTestPostgresUrl()
const backends: Array<{
  name: string
  database: () => { env: Record<string, string>; cleanup(): Promise<void> }
}> = [
  {
    name: 'SQLite',
    database: () => {
      const folder = mkdtempSync(join(tmpdir(), 'registry-client-e2e-'))
      return {
        env: { DATABASE_URL: `sqlite:${join(folder, 'registry.sqlite')}` },
        cleanup: async () => rmSync(folder, { recursive: true, force: true }),
      }
    },
  },
  ...(pgUrl
    ? [
        {
          name: 'PostgreSQL',
          database: () => {
            const schema = `registry_client_e2e_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
            return {
              env: { DATABASE_URL: pgUrl, DATABASE_SCHEMA: schema },
              async cleanup() {
                const client = new pg.Client({ connectionString: pgUrl })
                await client.connect()
                await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
                await client.end()
              },
            }
          },
        },
      ]
    : []),
]

describe.each(backends)('registry-client against the registry service on $name', ({ database }) => {
  let news: Awaited<ReturnType<typeof startSite>>
  let broken: Awaited<ReturnType<typeof startSite>>
  let empty: Awaited<ReturnType<typeof startSite>>
  let acme: Awaited<ReturnType<typeof startSite>>
  let hostedOrigin: Awaited<ReturnType<typeof startSite>>
  let registry: RunningRegistry
  let cleanup: () => Promise<void>
  let apiKey: string
  let orgId: string

  beforeAll(async () => {
    ;[news, broken, empty, acme, hostedOrigin] = await Promise.all([
      startSite(),
      startSite(),
      startSite(),
      startSite(),
      startSite(),
    ])
    news.files.set('/.well-known/adagents.json', adagents([{ url: SALES, tags: ['news'] }]))
    broken.files.set('/.well-known/adagents.json', JSON.stringify({ authorized_agents: 'everyone' }))
    acme.files.set('/.well-known/brand.json', brandJson)
    const db = database()
    cleanup = db.cleanup
    const env = {
      ...db.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SEED: '0',
      ALLOW_PRIVATE_CRAWL: '1',
      CRAWL_TIMEOUT_MS: '3000',
      CRAWL_ORIGINS: [
        `news.example=${news.origin}`,
        `broken.example=${broken.origin}`,
        `empty.example=${empty.origin}`,
        `acme.example=${acme.origin}`,
        `hosted.example=${hostedOrigin.origin}`,
      ].join(','),
    }
    registry = await startRegistry(parseEnv(env), { log: () => {}, validateResponses: 'strict' })
    // The admin command writes the organization into the same database the service uses.
    const printed: string[] = []
    const code = await runAdmin(['create-org', '--name', 'Client Test Org', '--json'], env, {
      out: (line) => printed.push(line),
      err: (line) => printed.push(line),
    })
    expect(code, printed.join('\n')).toBe(0)
    ;({ apiKey, id: orgId } = JSON.parse(printed[0]!) as { apiKey: string; id: string })
  })

  afterAll(async () => {
    await registry?.close(1000)
    await Promise.all([news, broken, empty, acme, hostedOrigin].map((site) => site?.close()))
    await cleanup?.()
  })

  const anonymous = () => createRegistryClient({ baseUrl: registry.url })
  const member = () => createRegistryClient({ baseUrl: registry.url, apiKey })

  it('resolves properties and brands, one and in bulk', async () => {
    const property = await anonymous().resolveProperty('news.example')
    expect(property.publisher_domain).toBe('news.example')
    expect(property.authorized_agents?.map((agent) => agent.url)).toEqual([SALES])
    expect(property.properties?.map((item) => item.id ?? item.name).sort()).toEqual(
      expect.arrayContaining([expect.any(String)]),
    )

    const bulk = await anonymous().resolveProperties(['news.example', 'empty.example'])
    expect(bulk.results['news.example']).toMatchObject({ publisher_domain: 'news.example' })
    expect(bulk.results['empty.example']).toBeNull()

    const brand = await anonymous().resolveBrand('acme.example')
    expect(brand).toMatchObject({ canonical_domain: 'acme.example', brand_name: 'Acme' })
    const brands = await anonymous().resolveBrands(['acme.example', 'empty.example'])
    expect(brands.results['acme.example']).toMatchObject({ brand_name: 'Acme' })
    expect(brands.results['empty.example'] ?? null).toBeNull()

    const missing = await anonymous()
      .resolveBrand('empty.example')
      .catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(RegistryError)
    expect(missing).toMatchObject({ status: 404 })
    const invalid = await anonymous()
      .resolveBrand('not a domain')
      .catch((error: unknown) => error)
    expect(invalid).toMatchObject({ status: 400 })
  })

  it('answers authorization checks true and false, and expands selectors in both shapes', async () => {
    await anonymous().resolveProperty('news.example')
    const check = (agent: string, value: string) =>
      anonymous().checkPropertyAuthorization({
        agent_url: agent,
        identifier_type: 'domain',
        identifier_value: value,
      })
    expect((await check(SALES, 'news.example')).authorized).toBe(true)
    expect((await check(RESELLER, 'news.example')).authorized).toBe(false)

    const expanded = await anonymous().expandProductIdentifiers({
      agent_url: SALES,
      publisher_properties: [{ publisher_domain: 'news.example', selection_type: 'all' }],
    })
    // The agent is authorized for the `news` tag only: the app is not included.
    expect(expanded.properties.map((item) => item.property_id)).toEqual(['news_site'])
    expect(expanded.identifiers).toEqual([
      { type: 'domain', value: 'news.example', property_id: 'news_site', publisher_domain: 'news.example' },
    ])
    expect(expanded).toMatchObject({ property_count: 1, identifier_count: 1 })

    const documented = await anonymous().expandProductIdentifiers({
      agent_url: SALES,
      publisher_properties: [{ publisher_domain: 'news.example', tags: ['news'] }],
    })
    expect(documented.properties.map((item) => item.property_id)).toEqual(['news_site'])
    const none = await anonymous().expandProductIdentifiers({
      agent_url: RESELLER,
      publisher_properties: [{ publisher_domain: 'news.example', selection_type: 'all' }],
    })
    expect(none.property_count).toBe(0)
  })

  it('validates good and broken adagents.json files', async () => {
    const good = await anonymous().validateAdagents('news.example')
    expect(good.data.found).toBe(true)
    expect(good.data.validation).toMatchObject({ valid: true })
    const bad = await anonymous().validateAdagents('broken.example')
    expect(bad.data.validation).toMatchObject({ valid: false })
    expect((bad.data.validation as { errors: unknown[] }).errors.length).toBeGreaterThan(0)
  })

  it('locks the feed and member endpoints: 401 without or with a bad credential, 403 for another org', async () => {
    for (const client of [
      anonymous(),
      createRegistryClient({ baseUrl: registry.url, apiKey: 'sk_not_a_key' }),
    ]) {
      const error = await client.getFeed().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(RegistryError)
      expect(error).toMatchObject({ status: 401 })
    }
    const other = await registry.createOrg('Someone Else')
    const forbidden = await member()
      .listMemberAgents({ org: other.id })
      .catch((e: unknown) => e)
    expect(forbidden).toMatchObject({ status: 403 })
    const mine = await member().listMemberAgents({ org: orgId })
    expect(Array.isArray(mine.agents)).toBe(true)
  })

  it('reports a crawl that changes an authorization on the feed, and the follower resumes from its cursor', async () => {
    const client = member()
    await client.resolveProperty('news.example')
    await registry.crawlsIdle()
    // Read to the end of the feed first.
    let cursor: string | null = null
    for (;;) {
      const page = await client.getFeed({ cursor, limit: 1000 })
      cursor = page.cursor
      if (!page.has_more) break
    }
    const empty = await client.getFeed({ cursor })
    expect(empty).toMatchObject({ events: [], cursor, has_more: false })

    // The publisher drops the sales agent and authorizes a reseller; ask for a re-crawl.
    news.files.set('/.well-known/adagents.json', adagents([{ url: RESELLER, tags: ['news', 'apps'] }]))
    const crawl = await client.requestCrawl('news.example')
    await registry.crawlsIdle()
    expect(crawl).toMatchObject({ domain: 'news.example', crawl_request_id: expect.any(String) })
    const status = await client.getCrawlRequest(crawl.crawl_request_id)
    expect(status).toMatchObject({ crawl_request_id: crawl.crawl_request_id, status: 'completed' })

    const seen: RegistryFeedEvent[] = []
    const store = {
      value: cursor,
      load() {
        return this.value
      },
      save(next: string | null) {
        this.value = next
      },
    }
    const controller = new AbortController()
    await followFeed({
      client,
      cursorStore: store,
      types: ['authorization.*'],
      pollIntervalMs: 20,
      signal: controller.signal,
      onEvent(event) {
        seen.push(event)
        const types = seen.map((e) => e.event_type)
        if (types.includes('authorization.revoked') && types.includes('authorization.granted'))
          controller.abort()
      },
    })
    const revoked = seen.find((e) => e.event_type === 'authorization.revoked')
    const granted = seen.find((e) => e.event_type === 'authorization.granted')
    expect(revoked?.payload).toMatchObject({ agent_url: SALES, publisher_domain: 'news.example' })
    expect(granted?.payload).toMatchObject({ agent_url: RESELLER, publisher_domain: 'news.example' })
    expect(store.value).toBe(seen.at(-1)!.event_id)
    // Nothing more after the saved cursor; the authorization answers changed.
    expect((await client.getFeed({ cursor: store.value, types: 'authorization.*' })).events).toEqual([])
    const check = (agent: string) =>
      client.checkPropertyAuthorization({
        agent_url: agent,
        identifier_type: 'domain',
        identifier_value: 'news.example',
      })
    expect((await check(SALES)).authorized).toBe(false)
    expect((await check(RESELLER)).authorized).toBe(true)
    news.files.set('/.well-known/adagents.json', adagents([{ url: SALES, tags: ['news'] }]))
  })

  it('answers an unknown cursor with CursorExpiredError, on pages and on the stream', async () => {
    const unknown = '01900000-0000-7000-8000-000000000000'
    await expect(member().getFeed({ cursor: unknown })).rejects.toBeInstanceOf(CursorExpiredError)
    await expect(member().streamFeed({ cursor: unknown }).next()).rejects.toBeInstanceOf(CursorExpiredError)
  })

  it('streams the feed over SSE', async () => {
    // Earlier tests left events on the feed: the stream starts with a feed page of them.
    const controller = new AbortController()
    const messages = []
    for await (const message of member().streamFeed({ signal: controller.signal, limit: 2 })) {
      messages.push(message)
      controller.abort()
    }
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({ event: 'feed', data: { events: expect.any(Array) } })
    if (messages[0]?.event === 'feed') {
      expect(messages[0].data.events.length).toBeGreaterThan(0)
      expect(messages[0].data.cursor).toBe(messages[0].data.events.at(-1)?.event_id)
    }
  })

  it('runs the OAuth 2.1 flow and calls locked endpoints with the user token and with getToken', async () => {
    const metadata = (await (
      await fetch(`${registry.url}/.well-known/oauth-authorization-server`)
    ).json()) as {
      registration_endpoint: string
      authorization_endpoint: string
      token_endpoint: string
    }
    const resource = await (await fetch(`${registry.url}/.well-known/oauth-protected-resource/api`)).json()
    expect(resource).toMatchObject({ resource: `${registry.url}/api`, authorization_servers: [registry.url] })
    const redirect = 'http://127.0.0.1:9/callback'
    const registered = (await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [redirect], client_name: 'e2e' }),
      })
    ).json()) as { client_id: string }
    const { verifier, challenge } = pkce()
    const consent = await fetch(metadata.authorization_endpoint, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: registered.client_id,
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        email: 'ana@example.com',
        api_key: apiKey,
        decision: 'approve',
      }).toString(),
    })
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!
    const tokens = (await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirect,
          client_id: registered.client_id,
          code_verifier: verifier,
        }).toString(),
      })
    ).json()) as { access_token: string; refresh_token: string }
    expect(tokens.access_token.split('.')).toHaveLength(3)

    const asUser = createRegistryClient({ baseUrl: registry.url, token: tokens.access_token })
    expect((await asUser.getFeed({ limit: 1 })).freshness.retention_days).toBeGreaterThan(0)
    const viaGetToken = createRegistryClient({ baseUrl: registry.url, getToken: () => tokens.access_token })
    const registeredAgent = await viaGetToken.registerMemberAgent({
      url: 'https://agent.e2e.example/mcp',
      type: 'sales',
    })
    expect(registeredAgent).toBeDefined()
    const listed = await member().listMemberAgents()
    expect(listed.agents.map((agent) => agent.url)).toContain('https://agent.e2e.example/mcp')
  })

  it('looks up a self-hosted publisher: hosting mode, properties and the per-agent rollup', async () => {
    await anonymous().resolveProperty('news.example')
    const publisher = await anonymous().lookupPublisher('news.example', { include: 'placements' })
    expect(publisher).toMatchObject({
      domain: 'news.example',
      member: null,
      hosting: { mode: 'self', expected_url: 'https://news.example/.well-known/adagents.json' },
      files: { adagents_json: { status: 'valid' } },
      placements: [],
    })
    expect(publisher.properties.map((property) => property.source)).toEqual([
      'adagents_json',
      'adagents_json',
    ])
    const agent = publisher.authorized_agents[0]!
    expect(agent).toMatchObject({ source: 'adagents_json', properties_total: 2, publisher_wide: false })
    expect(agent.properties_authorized).toBeGreaterThan(0)
    const invalid = await anonymous()
      .lookupPublisher('not a domain')
      .catch((error: unknown) => error)
    expect(invalid).toMatchObject({ status: 400 })
  })

  it('claims a hosted domain, verifies its origin pointer and sets up its hosted brand.json', async () => {
    const client = member()
    await client.request('POST', '/api/properties/save', {
      body: { publisher_domain: 'hosted.example', properties: [{ type: 'website', name: 'Hosted Example' }] },
    })
    // Not owned yet: the brand cannot be set up.
    await expect(
      client.setupMyBrand({ domain: 'hosted.example', brand_name: 'Hosted' }),
    ).rejects.toMatchObject({
      status: 403,
    })
    const claim = await client.claimHostedPropertyDomain('hosted.example')
    expect(claim.authoritative_location).toContain(
      `${registry.url}/hosted/hosted.example/adagents.json?adcp_claim=`,
    )

    const missing = await client.verifyHostedPropertyOrigin('hosted.example')
    expect(missing).toMatchObject({ verified: false, reason: 'not_found' })
    hostedOrigin.files.set(
      '/.well-known/adagents.json',
      JSON.stringify({ authoritative_location: claim.authoritative_location }),
    )
    // Any authenticated caller may trigger it: the token in the pointer decides the owner.
    const other = await registry.createOrg('Bystander')
    const verified = await createRegistryClient({
      baseUrl: registry.url,
      apiKey: other.apiKey,
    }).verifyHostedPropertyOrigin('hosted.example')
    expect(verified).toMatchObject({
      verified: true,
      reason: 'authoritative_location_pointer',
      bound_org_id: orgId,
    })

    const lookup = await anonymous().lookupPublisher('hosted.example')
    expect(lookup.hosting).toMatchObject({
      mode: 'aao_hosted',
      hosted_url: `${registry.url}/hosted/hosted.example/adagents.json`,
      origin_verified_at: verified.checked_at,
    })

    const brand = await client.setupMyBrand({
      domain: 'hosted.example',
      brand_name: 'Hosted Example',
      brand_color: '#123456',
    })
    expect(brand.hosted_brand_json_url).toBe(`${registry.url}/hosted/hosted.example/brand.json`)
    expect(JSON.parse(brand.pointer_snippet)).toMatchObject({
      authoritative_location: brand.hosted_brand_json_url,
    })
    expect(await anonymous().resolveBrand('hosted.example')).toMatchObject({
      brand_name: 'Hosted Example',
      source: 'hosted',
    })
    const served = (await (await fetch(brand.hosted_brand_json_url)).json()) as { house: { name: string } }
    expect(served.house.name).toBe('Hosted Example')
  })

  it('lists publishers and agents and reports statistics', async () => {
    const stats = await anonymous().getStats()
    expect(stats).toBeTypeOf('object')
    const publishers = await anonymous().listPublishers()
    expect(JSON.stringify(publishers)).toContain('news.example')
    const agents = await anonymous().listAgents()
    expect(agents).toBeTypeOf('object')
  })
})
