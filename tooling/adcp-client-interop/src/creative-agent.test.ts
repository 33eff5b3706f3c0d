/**
 * Interop judged from outside: our creative agent (a service on 127.0.0.1) read by a buyer built on the official
 * AdCP client SDK (@adcp/client 4.8), over MCP and over A2A (the SDK's A2A 0.3 client): its capabilities and its
 * format catalog, each answer checked by the SDK against its own schemas, the same formats over both.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's results are read as JSON */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADCPMultiAgentClient } from '@adcp/client'
import { parseEnv, startCreativeAgent, type RunningCreativeAgent } from '@adwire/app-creative-agent'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const BUYER_TOKEN = 'buyer-token-for-the-adcp-client-interop-4567'

let dir: string
let agent: RunningCreativeAgent
let client: ADCPMultiAgentClient
const formatsBy = new Map<string, string[]>()

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'adwire-adcp-client-creative-'))
  agent = await startCreativeAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'creative-agent.sqlite')}`,
      TOKENS: `buyer-1:${BUYER_TOKEN}:read+write`,
    }),
  )
  client = new ADCPMultiAgentClient([
    {
      id: 'creative_mcp',
      name: 'Creative (MCP)',
      agent_uri: `${agent.url}/mcp`,
      protocol: 'mcp',
      auth_token: BUYER_TOKEN,
    },
    {
      id: 'creative_a2a',
      name: 'Creative (A2A)',
      agent_uri: agent.url,
      protocol: 'a2a',
      auth_token: BUYER_TOKEN,
    },
  ])
}, 60_000)

afterAll(async () => {
  await agent?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe.each(['creative_mcp', 'creative_a2a'] as const)('the official AdCP client (%s)', (agentId) => {
  it("reads the capabilities and the format catalog, both passing the SDK's schema checks", async () => {
    const creative = client.agent(agentId)
    const capabilities = await creative.getAdcpCapabilities({} as any)
    expect(capabilities.success, JSON.stringify(capabilities.error)).toBe(true)
    expect((capabilities.data as any).supported_protocols).toContain('creative')
    const formats = await creative.listCreativeFormats({} as any)
    expect(formats.success, JSON.stringify(formats.error)).toBe(true)
    const ids = ((formats.data as any).formats as any[]).map((format) => format.format_id.id).sort()
    expect(ids.length).toBeGreaterThan(10)
    formatsBy.set(agentId, ids)
  })
})

it('gives the same catalog over MCP and A2A', () => {
  expect(formatsBy.get('creative_a2a')).toEqual(formatsBy.get('creative_mcp'))
})
