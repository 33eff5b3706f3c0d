/**
 * What the official clients keep of a request: the official MCP SDK client lists every tool of both agents and
 * each tool's `inputSchema` must declare every property of its official 3.1.19 request file, with the file's
 * `required` (the official AdCP client strips the arguments a tool does not declare, so a tool declaring only
 * the envelope loses the whole request). Tools with no official request file are listed with the reason.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { parseEnv as creativeEnv, startCreativeAgent } from '@adwire/app-creative-agent'
import { parseEnv as salesEnv, startSalesAgent } from '@adwire/app-sales-agent'
import { conformancePath } from '@adwire/conformance'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const TOKEN = 'buyer-token-for-the-tool-schema-check-0123456789'
const SCHEMAS = conformancePath('schemas/3.1.19')

/** Tools 3.1.19 has no request file for, and why. */
const NO_OFFICIAL_REQUEST: Readonly<Record<string, string>> = {
  sync_principal: 'agent-level configuration (notification_configs); 3.1.19 defines no request schema for it',
  sync_agent_notification_configs:
    'agent-level notification_configs; 3.1.19 defines no request schema for it',
}

/** Where the official request file of a tool is not found by its name alone (the same name in two domains). */
const DOMAIN_OF: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  sales: { list_creative_formats: 'media-buy' },
  creative: { list_creative_formats: 'creative' },
}

function officialRequest(
  agent: string,
  tool: string,
): { properties: string[]; required: string[] } | undefined {
  const file = `${tool.replaceAll('_', '-')}-request.json`
  const domains = DOMAIN_OF[agent]?.[tool]
    ? [DOMAIN_OF[agent][tool]]
    : readdirSync(SCHEMAS, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
  const found = domains.flatMap((domain) => {
    try {
      return [JSON.parse(readFileSync(join(SCHEMAS, domain, file), 'utf8')) as Record<string, unknown>]
    } catch {
      return []
    }
  })
  if (found.length > 1)
    throw new Error(`${tool}: ${found.length} official request files, add it to DOMAIN_OF`)
  const schema = found[0]
  if (!schema) return undefined
  return {
    properties: Object.keys((schema.properties as object | undefined) ?? {}).sort(),
    required: [...((schema.required as string[] | undefined) ?? [])].sort(),
  }
}

interface Listed {
  readonly name: string
  readonly inputSchema: { properties?: Record<string, unknown>; required?: string[] }
}

const dir = mkdtempSync(join(tmpdir(), 'adwire-tool-schemas-'))
const stops: (() => Promise<void>)[] = []
const tools: Record<string, Listed[]> = {}

async function listTools(url: string): Promise<Listed[]> {
  const client = new Client({ name: 'adwire-tool-schema-check', version: '0.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  )
  const { tools: listed } = await client.listTools()
  await client.close()
  return listed as Listed[]
}

beforeAll(async () => {
  const common = { PORT: '0', HOST: '127.0.0.1', TOKENS: `buyer-1:${TOKEN}:read+write` }
  // The test controller on, as an operator turns it on for a compliance run, so its tool is listed too.
  const sales = await startSalesAgent(
    salesEnv({
      ...common,
      DATABASE_URL: `sqlite:${join(dir, 'sales.sqlite')}`,
      COMPLY_TEST_CONTROLLER: '1',
      TEST_KIT_CREDENTIALS: '1',
    }),
  )
  stops.push(() => sales.close())
  const creative = await startCreativeAgent(
    creativeEnv({ ...common, DATABASE_URL: `sqlite:${join(dir, 'creative.sqlite')}` }),
  )
  stops.push(() => creative.close())
  tools.sales = await listTools(sales.url)
  tools.creative = await listTools(creative.url)
})

afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  rmSync(dir, { recursive: true, force: true })
})

describe.each(['sales', 'creative'])('the %s agent', (agent) => {
  it('lists its tools, the test controller among the sales agent’s', () => {
    expect(tools[agent]!.length).toBeGreaterThan(2)
    if (agent === 'sales') expect(tools[agent]!.map((tool) => tool.name)).toContain('comply_test_controller')
  })

  it('declares every property of the official request file, with its required, on every tool', () => {
    const mismatches: string[] = []
    for (const tool of tools[agent]!) {
      const official = officialRequest(agent, tool.name)
      if (!official) {
        if (!NO_OFFICIAL_REQUEST[tool.name])
          mismatches.push(`${tool.name}: no official request file, none listed`)
        continue
      }
      const declared = Object.keys(tool.inputSchema.properties ?? {})
      const missing = official.properties.filter((name) => !declared.includes(name))
      if (missing.length) mismatches.push(`${tool.name}: does not declare ${missing.join(', ')}`)
      const required = [...(tool.inputSchema.required ?? [])].sort()
      if (JSON.stringify(required) !== JSON.stringify(official.required))
        mismatches.push(
          `${tool.name}: required ${required.join(',')} instead of ${official.required.join(',')}`,
        )
    }
    expect(mismatches).toEqual([])
  })
})

describe('tools without an official request file', () => {
  it('declare the fields they read', () => {
    const byName = new Map(tools.sales!.map((tool) => [tool.name, tool]))
    expect(Object.keys(byName.get('sync_principal')?.inputSchema.properties ?? {})).toContain('configuration')
    expect(
      Object.keys(byName.get('sync_agent_notification_configs')?.inputSchema.properties ?? {}),
    ).toContain('notification_configs')
  })
})
