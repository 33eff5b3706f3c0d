/**
 * A 3.0-era buyer (adcp_major_version only, as the official SDK's runner sends) gets the lists 3.1 widened cut
 * to 3.0's closed enums: the capabilities' controller scenarios and a buy's valid_actions, on MCP and A2A; a
 * 3.1 buyer (adcp_version) gets the whole 3.1 answer. Both answers validate against the official 3.1.19 schema.
 * A 3.0-era sync_governance may carry 3.0's `categories`; a 3.1 buyer's may not.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import type { RunningSalesAgent } from './service.js'
import {
  a2aSend,
  ACCOUNT,
  artifactData,
  BUYER_TOKEN,
  buyRequest,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
} from './test-support.js'

const CAPS = 'protocol/get-adcp-capabilities-response.json'
const CREATE = 'media-buy/create-media-buy-response.json'
const GET = 'media-buy/get-media-buys-response.json'
const ACTIONS_30 = [
  'pause',
  'resume',
  'cancel',
  'update_budget',
  'update_dates',
  'update_packages',
  'add_packages',
  'sync_creatives',
]
const SCENARIOS_30 = [
  'force_creative_status',
  'force_account_status',
  'force_media_buy_status',
  'force_session_status',
  'simulate_delivery',
  'simulate_budget_spend',
]

let agent: RunningSalesAgent
beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

describe('a 3.0-era buyer', () => {
  it('sees only 3.0 controller scenarios; a 3.1 buyer sees every one', async () => {
    // An https public URL, as the official schema wants brand_json_url.
    const agent = await startTestAgent({ PUBLIC_URL: 'https://sales.adwire.test' })
    onTestFinished(() => agent.close())
    const old = await mcpOk(agent, undefined, 'get_adcp_capabilities', { adcp_major_version: 3 }, CAPS)
    expect(old.compliance_testing.scenarios.length).toBeGreaterThan(0)
    for (const scenario of old.compliance_testing.scenarios) expect(SCENARIOS_30).toContain(scenario)
    const current = await mcpOk(
      agent,
      undefined,
      'get_adcp_capabilities',
      { adcp_major_version: 3, adcp_version: '3.1' },
      CAPS,
    )
    expect(current.compliance_testing.scenarios).toContain('force_upstream_unavailable')
  })

  it('sees a buy with 3.0 valid_actions and every available_action, over MCP and A2A', async () => {
    const created = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({ adcp_major_version: 3 }),
      CREATE,
    )
    for (const action of created.valid_actions) expect(ACTIONS_30).toContain(action)
    expect(created.available_actions.map((entry: { action: string }) => entry.action)).toContain(
      'update_pacing',
    )
    const listed = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { adcp_major_version: 3, media_buy_ids: [created.media_buy_id] },
      GET,
    )
    for (const action of listed.media_buys[0].valid_actions) expect(ACTIONS_30).toContain(action)
    const current = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { adcp_version: '3.1', media_buy_ids: [created.media_buy_id] },
      GET,
    )
    expect(current.media_buys[0].valid_actions).toContain('update_pacing')
    const task = await a2aSend(agent, BUYER_TOKEN, 'create_media_buy', buyRequest({ adcp_major_version: 3 }))
    for (const action of artifactData(task).valid_actions) expect(ACTIONS_30).toContain(action)
  })

  it("registers a governance agent sent in 3.0's shape (categories); a 3.1 buyer must send 3.1.19's", async () => {
    const governance = (extra: Record<string, unknown>) => ({
      idempotency_key: newKey(),
      accounts: [
        {
          account: ACCOUNT,
          governance_agents: [
            {
              url: 'https://governance.example',
              authentication: { schemes: ['Bearer'], credentials: 'x'.repeat(40) },
              categories: ['budget_authority', 'brand_policy'],
            },
          ],
        },
      ],
      ...extra,
    })
    const synced = await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_governance',
      governance({ adcp_major_version: 3 }),
      'account/sync-governance-response.json',
    )
    expect(synced.accounts[0]).toMatchObject({
      status: 'synced',
      governance_agents: [{ url: 'https://governance.example' }],
    })
    expect(synced.accounts[0].governance_agents[0].categories).toBeUndefined()
    const refused = await mcpFails(
      agent,
      BUYER_TOKEN,
      'sync_governance',
      governance({ adcp_major_version: 3, adcp_version: '3.1' }),
      'INVALID_REQUEST',
    )
    expect(refused.field).toBe('accounts[0].governance_agents[0]')
  })
})
