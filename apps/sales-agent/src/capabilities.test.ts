/**
 * The running sales agent on a real SQLite file, through the official MCP client and the A2A client: the tool
 * list, get_adcp_capabilities against the official schema (media_buy, granularities, controller scenarios,
 * idempotency, webhook signing key origins, capabilities_version), brand.json and the JWKS, /health, and the
 * body-size limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TASK_NAMES } from '@adwire/seller'
import type { RunningSalesAgent } from './service.js'
import { a2aSend, artifactData, expectOfficial, mcpClient, mcpOk, startTestAgent } from './test-support.js'

const CAPS = 'protocol/get-adcp-capabilities-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent({ PUBLIC_URL: 'https://sales.adwire.test' })
})
afterAll(() => agent.close())

describe('get_adcp_capabilities', () => {
  it('lists every task as an MCP tool', async () => {
    const client = await mcpClient(agent)
    const { tools } = await client.listTools()
    await client.close()
    expect(tools.map((tool) => tool.name)).toEqual([...TASK_NAMES].slice(0, tools.length))
    expect(tools.length).toBeGreaterThanOrEqual(1)
    // The seller's list_creative_formats takes the media-buy request, not the creative agent's of the same name.
    const formats = tools.find((tool) => tool.name === 'list_creative_formats')!.inputSchema.properties!
    expect(Object.keys(formats)).toEqual(expect.arrayContaining(['publisher_domain', 'property_id']))
    expect(Object.keys(formats)).not.toContain('include_pricing')
  })

  it('describes the seller over MCP, valid against the official schema, with context echoed', async () => {
    const context = { correlation_id: 'caps-1' }
    const caps = await mcpOk(agent, undefined, 'get_adcp_capabilities', { context }, CAPS)
    expect(caps.context).toEqual(context)
    expect(caps.supported_protocols).toEqual(['media_buy'])
    expect(caps.adcp.idempotency).toEqual({
      supported: true,
      replay_ttl_seconds: 86_400,
      in_flight_max_seconds: 300,
    })
    expect(caps.media_buy.reporting_capabilities.windowed_pull_granularities).toEqual(['daily'])
    expect(caps.compliance_testing.scenarios).toContain('force_media_buy_status')
    expect(caps.compliance_testing.scenarios).not.toContain('list_scenarios')
    expect(caps.identity).toEqual({
      brand_json_url: 'https://sales.adwire.test/.well-known/brand.json',
      key_origins: { webhook_signing: 'https://sales.adwire.test' },
    })
    expect(caps.webhook_signing).toMatchObject({ supported: true, profile: 'adcp/webhook-signing/v1' })
    expect(caps.ext.adwire.capabilities_version).toMatch(/^[0-9a-f]{16}$/)
  })

  it('answers the same over A2A (an agent on its listening URL, so brand_json_url is http: not https)', async () => {
    const local = await startTestAgent()
    try {
      const task = await a2aSend(local, undefined, 'get_adcp_capabilities', { context: { id: 'a2a' } })
      const caps = artifactData(task)
      expect(caps.context).toEqual({ id: 'a2a' })
      expect(caps.supported_protocols).toEqual(['media_buy'])
      // The official schema asks for an https brand.json: only the http identity differs.
      expectOfficial(CAPS, {
        ...caps,
        identity: { brand_json_url: 'https://sales.example/.well-known/brand.json' },
      })
    } finally {
      await local.close()
    }
  })
})

describe('capabilities describe the running configuration', () => {
  it('creative_approval_mode follows CREATIVE_REVIEW: auto_approve, or require_human when creatives wait for review', async () => {
    expect(
      (await mcpOk(agent, undefined, 'get_adcp_capabilities', {}, CAPS)).media_buy.creative_approval_mode,
    ).toBe('auto_approve')
    const manual = await startTestAgent({
      PUBLIC_URL: 'https://sales.adwire.test',
      CREATIVE_REVIEW: 'manual',
    })
    try {
      const caps = await mcpOk(manual, undefined, 'get_adcp_capabilities', {}, CAPS)
      expect(caps.media_buy.creative_approval_mode).toBe('require_human')
    } finally {
      await manual.close()
    }
  })
})

describe('HTTP surface', () => {
  it('publishes brand.json pointing at the JWKS that holds the webhook-signing key', async () => {
    const brand = (await (await fetch(`${agent.url}/.well-known/brand.json`)).json()) as {
      agents: { url: string; jwks_uri: string }[]
    }
    expect(brand.agents.map((entry) => entry.url)).toEqual([
      'https://sales.adwire.test',
      'https://sales.adwire.test/mcp',
      'https://sales.adwire.test/a2a',
    ])
    const jwks = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string; d?: string }[]
    }
    expect(jwks.keys[0]!.kid).toBe(agent.runtime.deps.key.publicJwk.kid)
    expect(jwks.keys[0]!.d).toBeUndefined()
    // The webhook key's purpose, as verifiers written to the 3.0 rules require of a webhook signer.
    expect(jwks.keys[0]).toMatchObject({ adcp_use: 'webhook-signing', use: 'sig', key_ops: ['verify'] })
  })

  it('reports health from the database', async () => {
    const response = await fetch(`${agent.url}/health`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: 'ok', database: 'sqlite' })
  })

  it('refuses a request body over 1 MiB with 413', async () => {
    const response = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', padding: 'x'.repeat(1_100_000) }),
    })
    expect(response.status).toBe(413)
  })
})
