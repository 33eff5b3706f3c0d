/**
 * A compliance run leaves a long-lived agent as it was for every other buyer (issues 22 and 23): storyboards
 * that seed products, pricing options and formats through the test controller run with a sandbox test-kit key
 * against a sales agent that also serves a live buyer; afterwards the live buyer, through the official AdCP
 * client (which checks every get_products answer against its own schema), and an anonymous caller see exactly
 * the catalog they saw before. Seeds stay in the seeding key's sandbox, also after the agent restarts.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's results are read as JSON */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADCPMultiAgentClient } from '@adcp/client'
import { parseEnv, startSalesAgent, type RunningSalesAgent } from '@adwire/app-sales-agent'
import { runStoryboards } from '@adwire/storyboards'
import { afterAll, beforeAll, expect, it } from 'vitest'

const BUYER_TOKEN = 'live-buyer-token-for-the-storyboard-run-0123'
/** Storyboards whose fixtures the runner seeds through comply_test_controller. */
const SEEDING = ['get_products_pagination_integrity', 'pagination_integrity_creative_formats']

let dir: string
let agent: RunningSalesAgent | undefined

const start = async () =>
  startSalesAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'sales-agent.sqlite')}`,
      TOKENS: `live-buyer:${BUYER_TOKEN}:read+write+delete+approve`,
      COMPLY_TEST_CONTROLLER: '1',
      TEST_KIT_CREDENTIALS: '1',
    }),
  )

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'adwire-storyboard-leaves-'))
  agent = await start()
}, 60_000)

afterAll(async () => {
  await agent?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** What the live buyer sees through the official client, and what an anonymous caller sees over MCP. */
async function views(url: string) {
  const client = new ADCPMultiAgentClient([
    { id: 'seller', name: 'Seller', agent_uri: `${url}/mcp`, protocol: 'mcp', auth_token: BUYER_TOKEN },
  ])
  const answer = await client.agent('seller').getProducts({ buying_mode: 'wholesale' } as any)
  expect(answer.success, JSON.stringify(answer.error)).toBe(true)
  const byId = (list: any[]) => [...list].sort((a, b) => String(a.product_id).localeCompare(b.product_id))
  const anonymous = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_products', arguments: { buying_mode: 'wholesale' } },
    }),
  })
  const text = await anonymous.text()
  const json = JSON.parse(text.startsWith('{') ? text : text.replace(/^[\s\S]*?data: /, ''))
  const formats = await client.agent('seller').executeTask('list_creative_formats', {} as any)
  return {
    buyer: byId((answer.data as any).products),
    anonymous: byId(json.result.structuredContent.products),
    formats: ((formats.data as any).formats as any[]).map((format) => format.format_id.id).sort(),
  }
}

it('runs seeding storyboards with a kit key, and the live buyer and anonymous callers see what they saw before', async () => {
  const before = await views(agent!.url)
  const result = await runStoryboards({ agentUrl: agent!.url, protocol: 'mcp', storyboards: SEEDING })
  // The run did seed: its steps ran (not skipped behind a refused controller) and passed.
  expect(result.summary.steps.passed).toBeGreaterThan(0)
  // The run did seed: each storyboard ran to its end, and the one failed check is the http-only agent's
  // brand_json_url (the schema asks for https; this agent listens on http://127.0.0.1).
  const failedChecks = result.storyboards.flatMap((entry) =>
    entry.steps.flatMap((step) =>
      step.validations
        .filter((check) => !check.passed)
        .map((check) => `${entry.storyboard_id}/${step.step_id}: ${check.detail}`),
    ),
  )
  for (const failed of failedChecks) expect(failed).toMatch(/brand_json_url must match pattern "\^https/)
  expect(result.storyboards.map((entry) => entry.storyboard_id).sort()).toEqual([...SEEDING].sort())
  expect(await views(agent!.url)).toEqual(before)
  // And after a restart on the same database.
  await agent!.close()
  agent = await start()
  expect(await views(agent.url)).toEqual(before)
}, 120_000)
