/**
 * Agent Probing against our own agents on 127.0.0.1 — the creative agent (apps/creative-agent) and the sales agent
 * (apps/sales-agent) — over MCP and over A2A with the official SDK clients; the SSRF policy (loopback and private
 * addresses refused unless ALLOW_PRIVATE_AGENTS), the deadline, a URL that is no agent, the rate limit, and
 * publisher validation on a real site.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  parseEnv as parseCreativeEnv,
  startCreativeAgent,
  type RunningCreativeAgent,
} from '@adwire/app-creative-agent'
import { parseEnv as parseSalesEnv, startSalesAgent, type RunningSalesAgent } from '@adwire/app-sales-agent'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, startSite, startTestRegistry, type Site, type TestRegistry } from '../testing/registry.js'

let dir: string
let creative: RunningCreativeAgent
let sales: RunningSalesAgent
let site: Site
let silent: Server
let silentUrl: string
let test: TestRegistry
let strict: TestRegistry
let limited: TestRegistry

const q = encodeURIComponent

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'adwire-registry-probe-'))
  creative = await startCreativeAgent(
    parseCreativeEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'creative.sqlite')}`,
      TOKENS: 'probe-buyer:probe-token-for-the-creative-agent-0123:read',
    }),
  )
  sales = await startSalesAgent(
    parseSalesEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'sales.sqlite')}`,
      TOKENS: 'probe-buyer:probe-token-for-the-sales-agent-012345:read',
    }),
  )
  site = await startSite()
  site.serveJson('/.well-known/adagents.json', {
    properties: [
      {
        property_id: 'news_web',
        property_type: 'website',
        name: 'News',
        identifiers: [{ type: 'domain', value: 'probe-pub.test' }],
        tags: ['news'],
      },
      {
        property_id: 'news_app',
        property_type: 'mobile_app',
        name: 'News app',
        identifiers: [{ type: 'bundle_id', value: 'test.probe.news' }],
        tags: ['news', 'app'],
      },
    ],
    authorized_agents: [
      {
        url: `${sales.url}/mcp`,
        authorized_for: 'all',
        authorization_type: 'property_tags',
        property_tags: ['news'],
      },
    ],
    last_updated: '2026-06-01T00:00:00Z',
  })
  // Accepts connections and never answers.
  silent = createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`
  test = await startTestRegistry(
    { kind: 'sqlite' },
    {
      seed: false,
      origins: { 'probe-pub.test': site.origin },
      env: { ALLOW_PRIVATE_AGENTS: '1', AGENT_TIMEOUT_MS: '10000' },
    },
  )
  strict = await startTestRegistry({ kind: 'sqlite' }, { seed: false })
  limited = await startTestRegistry(
    { kind: 'sqlite' },
    {
      seed: false,
      env: { ALLOW_PRIVATE_AGENTS: '1', AGENT_TIMEOUT_MS: '1000', RATE_LIMIT_CRAWL_PER_MINUTE: '2' },
    },
  )
}, 60_000)

afterAll(async () => {
  for (const registry of [test, strict, limited]) {
    await registry?.registry.close()
    await registry?.cleanup()
  }
  await creative?.close()
  await sales?.close()
  await site?.close()
  silent?.closeAllConnections()
  await new Promise((resolve) => silent?.close(resolve))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('probing our creative agent', () => {
  it('discovers it at its base URL over both transports, and at each transport URL over that one', async () => {
    const base = await api(
      test.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(creative.url)}`,
    )
    expect(base.status).toBe(200)
    expect(base.body).toMatchObject({ protocols: ['mcp', 'a2a'], type: 'creative' })
    expect(base.body.tools.map((tool: { name: string }) => tool.name)).toEqual(
      expect.arrayContaining([
        'get_adcp_capabilities',
        'list_creative_formats',
        'build_creative',
        'preview_creative',
      ]),
    )
    expect(base.body.tools_count).toBe(base.body.tools.length)
    expect(base.body.stats.format_count).toBeGreaterThan(10)
    const a2a = await api(
      test.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(`${creative.url}/a2a`)}`,
    )
    expect(a2a.body).toMatchObject({ protocols: ['a2a'], type: 'creative' })
    expect(a2a.body.stats.format_count).toBe(base.body.stats.format_count)
  }, 30_000)

  it('reads the same formats over MCP and over A2A', async () => {
    const mcp = await api(
      test.registry,
      'getAgentFormats',
      `/api/public/agent-formats?url=${q(`${creative.url}/mcp`)}`,
    )
    const a2a = await api(
      test.registry,
      'getAgentFormats',
      `/api/public/agent-formats?url=${q(`${creative.url}/a2a`)}`,
    )
    expect(mcp.body.success).toBe(true)
    expect(mcp.body.formats.length).toBeGreaterThan(10)
    expect(a2a.body.formats).toEqual(mcp.body.formats)
  }, 30_000)
})

describe('probing an agent whose card offers only A2A 0.3 (written to earlier 3.x rules)', () => {
  it('reads its formats over A2A 0.3 with the official client, the same as over 1.0', async () => {
    // What such an agent serves: the 0.3 fields of our creative agent's card (no supportedInterfaces, no
    // securityRequirements), its `url` the agent's A2A endpoint, which answers 0.3 requests in 0.3.
    const card = (await (await fetch(`${creative.url}/a2a/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >
    const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacy } = card
    expect(legacy).toMatchObject({ protocolVersion: '0.3.0', url: `${creative.url}/a2a` })
    const legacySite = await startSite()
    try {
      legacySite.serveJson('/.well-known/agent-card.json', legacy)
      const discovered = await api(
        test.registry,
        'discoverAgent',
        `/api/public/discover-agent?url=${q(`${legacySite.origin}/a2a`)}`,
      )
      expect(discovered.status, JSON.stringify(discovered.body)).toBe(200)
      expect(discovered.body).toMatchObject({ protocols: ['a2a'], type: 'creative' })
      const formats = await api(
        test.registry,
        'getAgentFormats',
        `/api/public/agent-formats?url=${q(`${legacySite.origin}/a2a`)}`,
      )
      const current = await api(
        test.registry,
        'getAgentFormats',
        `/api/public/agent-formats?url=${q(`${creative.url}/a2a`)}`,
      )
      expect(formats.body.success).toBe(true)
      expect(formats.body.formats.length).toBeGreaterThan(10)
      expect(formats.body.formats).toEqual(current.body.formats)
    } finally {
      await legacySite.close()
    }
  }, 30_000)
})

describe('probing our sales agent', () => {
  it('reads its products and publishers over MCP and over A2A', async () => {
    const products = await api(
      test.registry,
      'getAgentProducts',
      `/api/public/agent-products?url=${q(`${sales.url}/mcp`)}`,
    )
    expect(products.status).toBe(200)
    expect(products.body.products.length).toBeGreaterThan(0)
    expect(products.body.products[0].product_id).toEqual(expect.any(String))
    const overA2a = await api(
      test.registry,
      'getAgentProducts',
      `/api/public/agent-products?url=${q(`${sales.url}/a2a`)}`,
    )
    expect(overA2a.body.products.map((product: { product_id: string }) => product.product_id)).toEqual(
      products.body.products.map((product: { product_id: string }) => product.product_id),
    )
    const publishers = await api(
      test.registry,
      'getAgentPublishers',
      `/api/public/agent-publishers?url=${q(`${sales.url}/mcp`)}`,
    )
    expect(publishers.body.success).toBe(true)
    expect(publishers.body.properties.length).toBeGreaterThan(0)
    expect(publishers.body.properties[0].publisher_domain).toEqual(expect.any(String))
    const discovered = await api(
      test.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(`${sales.url}/mcp`)}`,
    )
    expect(discovered.body).toMatchObject({ protocols: ['mcp'], type: 'sales' })
    expect(discovered.body.stats.product_count).toBe(products.body.products.length)
    expect(discovered.body.stats.publisher_count).toBe(publishers.body.properties.length)
  }, 30_000)

  it('answers 502 when the agent offers no such list (a creative agent sells no products)', async () => {
    const none = await api(
      test.registry,
      'getAgentProducts',
      `/api/public/agent-products?url=${q(`${creative.url}/mcp`)}`,
    )
    expect([none.status, none.body.error]).toEqual([502, 'agent_discovery_failed'])
  }, 30_000)
})

describe('the limits of probing', () => {
  it('refuses loopback and private agents without the explicit option', async () => {
    for (const url of [
      `${creative.url}/mcp`,
      'https://127.0.0.1/mcp',
      'https://10.1.2.3/mcp',
      'https://[::1]/mcp',
    ]) {
      const refused = await api(strict.registry, 'getAgentFormats', `/api/public/agent-formats?url=${q(url)}`)
      expect([refused.status, refused.body.error], url).toEqual([400, 'agent_url_refused'])
    }
    const discover = await api(
      strict.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(creative.url)}`,
    )
    expect(discover.status).toBe(400)
  }, 30_000)

  it('gives up on an agent that does not answer in time (504), and on a URL that is no agent (502)', async () => {
    const started = Date.now()
    // (the limited registry has a 1 s exchange timeout and a 2 s probe deadline)
    const silentAnswer = await api(
      limited.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(silentUrl)}`,
    )
    expect([silentAnswer.status, silentAnswer.body.error]).toEqual([504, 'agent_timeout'])
    expect(Date.now() - started).toBeLessThan(5000)
    const notAgent = await api(
      test.registry,
      'getAgentFormats',
      `/api/public/agent-formats?url=${q(site.origin)}`,
    )
    expect([notAgent.status, notAgent.body.error]).toEqual([502, 'agent_discovery_failed'])
    const discover = await api(
      test.registry,
      'discoverAgent',
      `/api/public/discover-agent?url=${q(`${site.origin}/mcp`)}`,
    )
    expect(discover.status).toBe(502)
  }, 30_000)

  it('refuses a missing or malformed URL', async () => {
    expect((await api(test.registry, 'getAgentFormats', '/api/public/agent-formats')).status).toBe(400)
    expect(
      (
        await api(
          test.registry,
          'getAgentPublishers',
          `/api/public/agent-publishers?url=${q('ftp://x.example')}`,
        )
      ).status,
    ).toBe(400)
    expect(
      (await api(test.registry, 'discoverAgent', '/api/public/discover-agent?url=not-a-url')).status,
    ).toBe(400)
  })

  it('rate-limits the probes with Retry-After', async () => {
    // Every probe counts, whatever the agent answers (here: a site that is no agent, 502).
    const path = `/api/public/agent-formats?url=${q(`${site.origin}/mcp`)}`
    expect((await api(limited.registry, 'getAgentFormats', path)).status).toBe(502)
    expect((await api(limited.registry, 'getAgentFormats', path)).status).toBe(502)
    const refused = await api(limited.registry, 'getAgentFormats', path)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ error: 'rate_limited', retryAfter: expect.any(Number) })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  }, 30_000)
})

describe('validatePublisher', () => {
  it("summarises a publisher's adagents.json, and reports a missing one", async () => {
    const valid = await api(
      test.registry,
      'validatePublisher',
      '/api/public/validate-publisher?domain=probe-pub.test',
    )
    expect(valid.body).toMatchObject({
      valid: true,
      domain: 'probe-pub.test',
      discovery_method: 'direct',
      agent_count: 1,
      property_count: 2,
      property_type_counts: { website: 1, mobile_app: 1 },
      tag_count: 2,
    })
    const missing = await api(
      test.registry,
      'validatePublisher',
      '/api/public/validate-publisher?domain=nothing-here.invalid',
    )
    expect(missing.body).toMatchObject({ valid: false, agent_count: 0, property_count: 0 })
    expect(missing.body.errors.length).toBeGreaterThan(0)
    expect(
      (await api(test.registry, 'validatePublisher', '/api/public/validate-publisher?domain=not_a_domain'))
        .status,
    ).toBe(400)
  }, 30_000)
})
