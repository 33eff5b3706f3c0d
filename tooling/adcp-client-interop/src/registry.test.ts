/**
 * Interop judged from outside: our registry service (its demo world, SQLite, on 127.0.0.1) read through the
 * official AdCP client SDK's RegistryClient (@adcp/client 4.8): the paths, query parameters and bodies that
 * client sends are served, and what it reads back has the shape it expects (its unknown brand is `null`, from a
 * 404). The live-fetching validations are left out: the demo domains do not resolve here.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RegistryClient } from '@adcp/client'
import { DEMO_AGENTS, parseEnv, startRegistry, type RunningRegistry } from '@adwire/app-registry'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let dir: string
let registry: RunningRegistry
let client: RegistryClient

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'adwire-adcp-client-registry-'))
  registry = await startRegistry(
    parseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'registry.sqlite')}` }),
  )
  client = new RegistryClient({ baseUrl: registry.url })
}, 60_000)

afterAll(async () => {
  await registry?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe("the official AdCP client's RegistryClient against our registry", () => {
  it('resolves brands one at a time and in bulk, finds companies, lists brands and reads brand.json', async () => {
    const brand = await client.lookupBrand('acme-outdoor.example')
    expect(brand).toMatchObject({ canonical_domain: 'acme-outdoor.example', brand_name: 'Acme Outdoor' })
    expect(await client.lookupBrand('nobody-here.example')).toBeNull()
    const bulk = await client.lookupBrands(['acme-outdoor.example', 'trailhead.example'])
    expect(Object.keys(bulk).sort()).toEqual(['acme-outdoor.example', 'trailhead.example'])
    const found = await client.findCompany('acme')
    expect(found.results.map((result) => result.domain)).toContain('acme-outdoor.example')
    const listed = await client.listBrands({ search: 'acme' })
    expect(listed.brands.map((entry) => entry.domain)).toContain('acme-outdoor.example')
    const json = await client.getBrandJson('acme-outdoor.example')
    expect(JSON.stringify(json)).toContain('Acme Outdoor Group')
    const ref = await client.lookupManifestRef('acme-outdoor.example')
    expect(ref).toMatchObject({ found: true })
  })

  it('resolves properties, lists properties, publishers and agents, and reads the stats', async () => {
    const property = await client.lookupProperty('pinecrest-news.example')
    expect(property).toMatchObject({ publisher_domain: 'pinecrest-news.example' })
    const many = await client.lookupProperties(['pinecrest-news.example'])
    expect(Object.keys(many)).toEqual(['pinecrest-news.example'])
    const properties = await client.listProperties()
    expect(properties.properties.map((entry) => entry.domain)).toContain('pinecrest-news.example')
    const publishers = await client.listPublishers()
    expect(publishers.publishers.map((entry) => entry.domain)).toContain('pinecrest-news.example')
    const agents = await client.listAgents({ type: 'sales' })
    // Both demo agents sell (DEMO_AGENTS: the ad network's and the publisher's own).
    expect(agents.agents.map((agent) => agent.url).sort()).toEqual(Object.values(DEMO_AGENTS).sort())
    const stats = await client.getRegistryStats()
    expect(stats).toMatchObject({ brands: 3, publishers: 2 })
  })

  it('answers the authorization lookups, the search and the property-list check', async () => {
    const domain = await client.lookupDomain('pinecrest-news.example')
    expect(domain.authorized_agents.length).toBeGreaterThan(0)
    const byIdentifier = await client.lookupPropertyByIdentifier('domain', 'pinecrest-news.example')
    const identified = (byIdentifier as { agents: { agent_url: string }[] }).agents
    expect(identified.map((agent) => agent.agent_url)).toEqual(
      domain.authorized_agents.map((agent) => agent.url),
    )
    const results = (await client.search('pinecrest')) as unknown as { publishers: { domain: string }[] }
    expect(results.publishers.map((entry) => entry.domain)).toContain('pinecrest-news.example')
    const check = await client.checkPropertyList(['pinecrest-news.example', 'unknown.example'])
    expect(check.summary).toMatchObject({ total: 2, ok: 1, assess: 1 })
  })
})
