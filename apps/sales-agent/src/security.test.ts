/**
 * The sales agent's security defaults (issue 22), through the official MCP and A2A clients: comply_test_controller
 * is off unless COMPLY_TEST_CONTROLLER=1 (refused with UNSUPPORTED_FEATURE, nothing seeded, not advertised); the
 * test-kit keys are refused unless TEST_KIT_CREDENTIALS=1, and then each key is its own buyer; an unknown bearer
 * on a public task is 401 AUTH_INVALID with WWW-Authenticate, not an anonymous call.
 */
import { join } from 'node:path'
import { a2aSendRequest } from '@adwire/agent-client'
import { afterAll, describe, expect, it } from 'vitest'
import { parseEnv } from './env.js'
import { startSalesAgent, type RunningSalesAgent } from './service.js'
import {
  ACCOUNT,
  KIT_SANDBOX,
  TOKENS,
  buyRequest,
  mcpCall,
  mcpError,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  tempDir,
  type Body,
} from './test-support.js'

const running: RunningSalesAgent[] = []
afterAll(() => Promise.all(running.map((agent) => agent.close())))

const start = async (env: Record<string, string>) => {
  const agent = await startTestAgent(env)
  running.push(agent)
  return agent
}

const SEED = {
  scenario: 'seed_product',
  account: { sandbox: true },
  params: {
    product_id: 'security_seeded_product',
    fixture: { delivery_type: 'non_guaranteed', channels: ['olv'], format_ids: [{ id: 'video_16x9_30s' }] },
  },
}

const productIds = async (agent: RunningSalesAgent): Promise<string[]> => {
  const products = await mcpOk(
    agent,
    KIT_SANDBOX,
    'get_products',
    { buying_mode: 'wholesale' },
    'media-buy/get-products-response.json',
  )
  return products.products.map((product: Body) => product.product_id)
}

const capabilitiesOf = (agent: RunningSalesAgent) =>
  mcpOk(agent, KIT_SANDBOX, 'get_adcp_capabilities', {}, 'core/protocol-envelope.json')

describe('comply_test_controller', () => {
  it('is off by default: UNSUPPORTED_FEATURE, the seed has no effect, compliance_testing is not advertised', async () => {
    expect(parseEnv({}).complyTestController).toBe(false)
    const agent = await start({ COMPLY_TEST_CONTROLLER: '0' })
    const refused = mcpError(await mcpCall(agent, KIT_SANDBOX, 'comply_test_controller', SEED))
    expect(refused.code).toBe('UNSUPPORTED_FEATURE')
    expect(refused.message).toMatch(/COMPLY_TEST_CONTROLLER=1/)
    expect(await productIds(agent)).not.toContain('security_seeded_product')
    expect(await capabilitiesOf(agent)).not.toHaveProperty('compliance_testing')
  })

  it('is on with COMPLY_TEST_CONTROLLER=1: the seed is sold and compliance_testing is advertised', async () => {
    const agent = await start({ COMPLY_TEST_CONTROLLER: '1' })
    const seeded = await mcpOk(
      agent,
      KIT_SANDBOX,
      'comply_test_controller',
      SEED,
      'compliance/comply-test-controller-response.json',
    )
    expect(seeded.success).toBe(true)
    expect(await productIds(agent)).toContain('security_seeded_product')
    expect((await capabilitiesOf(agent)).compliance_testing.scenarios).toContain('seed_product')
  })
})

describe('test-kit keys', () => {
  it('are refused by default', async () => {
    expect(parseEnv({}).testKitCredentials).toBe(false)
    const agent = await startSalesAgent(
      parseEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${join(tempDir(), 'sales-agent.sqlite')}`,
        TOKENS,
      }),
    )
    running.push(agent)
    await mcpFails(agent, KIT_SANDBOX, 'get_media_buys', {}, 'AUTH_INVALID')
  })

  it('with TEST_KIT_CREDENTIALS=1, each key is its own buyer: another kit key can neither see nor cancel a buy', async () => {
    const agent = await start({ TEST_KIT_CREDENTIALS: '1' })
    const other = 'demo-acme-outdoor-v2'
    const buy = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    const GET = 'media-buy/get-media-buys-response.json'
    const seen = await mcpOk(agent, other, 'get_media_buys', { media_buy_ids: [buy.media_buy_id] }, GET)
    expect(seen.media_buys).toEqual([])
    expect((await mcpOk(agent, other, 'get_media_buys', {}, GET)).media_buys).toEqual([])
    await mcpFails(
      agent,
      other,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: buy.media_buy_id, canceled: true },
      'MEDIA_BUY_NOT_FOUND',
    )
    const own = await mcpOk(agent, KIT_SANDBOX, 'get_media_buys', { media_buy_ids: [buy.media_buy_id] }, GET)
    expect(own.media_buys[0].status).not.toBe('canceled')
  })
})

describe('an unknown bearer on a public task', () => {
  const UNKNOWN = 'nobody-issued-this-token-0123456789'

  it('is 401 AUTH_INVALID over MCP (official client) and A2A, with WWW-Authenticate', async () => {
    const agent = await start({})
    const refused = await mcpFails(
      agent,
      UNKNOWN,
      'get_products',
      { buying_mode: 'wholesale' },
      'AUTH_INVALID',
    )
    expect(refused.code).toBe('AUTH_INVALID')
    const mcp = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${UNKNOWN}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'get_products', arguments: { buying_mode: 'wholesale' } },
      }),
    })
    expect(mcp.status).toBe(401)
    expect(mcp.headers.get('www-authenticate')).toMatch(/^Bearer realm=.*error="invalid_token"/)
    expect(((await mcp.json()) as Body).error.data.adcp_error.code).toBe('AUTH_INVALID')
    const { headers, body } = a2aSendRequest({ skill: 'get_products', input: { buying_mode: 'wholesale' } })
    const a2a = await fetch(`${agent.url}/a2a`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${UNKNOWN}` },
      body: JSON.stringify(body),
    })
    expect(a2a.status).toBe(401)
    expect(a2a.headers.get('www-authenticate')).toMatch(/^Bearer realm=.*error="invalid_token"/)
    expect(((await a2a.json()) as Body).error.data.adcp_error.code).toBe('AUTH_INVALID')
    // Without a header the public task still serves anyone.
    const anonymous = await mcpOk(
      agent,
      undefined,
      'get_products',
      { buying_mode: 'wholesale' },
      'media-buy/get-products-response.json',
    )
    expect(anonymous.products.length).toBeGreaterThan(0)
  })
})

describe('every task checks its area and level', () => {
  const READER = 'reader-token-for-scope-tests-0123456789'
  const BUYS_ONLY = 'buys-only-token-for-scope-tests-0123456789'
  const BUYER = 'buyer-token-for-scope-tests-0123456789'
  const SCOPED = [
    `reader:${READER}:read`,
    `buys-only:${BUYS_ONLY}:media_buys.read+media_buys.write`,
    `buyer:${BUYER}:read+write`,
  ].join(',')

  it('a read-only token cannot write accounts, governance, agent configs or drive the controller', async () => {
    const agent = await start({ TOKENS: SCOPED })
    const accounts = [{ ...ACCOUNT, billing: 'operator' }]
    await mcpFails(
      agent,
      READER,
      'sync_accounts',
      { idempotency_key: newKey(), accounts },
      'INSUFFICIENT_PERMISSIONS',
    )
    await mcpFails(
      agent,
      READER,
      'sync_governance',
      {
        idempotency_key: newKey(),
        accounts: [
          {
            account: ACCOUNT,
            governance_agents: [
              {
                url: 'https://governance.example/mcp',
                authentication: { schemes: ['Bearer'], credentials: 'x'.repeat(32) },
              },
            ],
          },
        ],
      },
      'INSUFFICIENT_PERMISSIONS',
    )
    await mcpFails(
      agent,
      READER,
      'sync_agent_notification_configs',
      { notification_configs: [] },
      'INSUFFICIENT_PERMISSIONS',
    )
    await mcpFails(agent, READER, 'sync_principal', { configuration: {} }, 'INSUFFICIENT_PERMISSIONS')
    await mcpFails(
      agent,
      READER,
      'comply_test_controller',
      { scenario: 'list_scenarios', account: { sandbox: true } },
      'INSUFFICIENT_PERMISSIONS',
    )
    // It still reads what it may; a token with write does write.
    await mcpOk(agent, READER, 'list_accounts', {}, 'account/list-accounts-response.json')
    const synced = await mcpOk(
      agent,
      BUYER,
      'sync_accounts',
      { idempotency_key: newKey(), accounts },
      'account/sync-accounts-response.json',
    )
    expect(synced.accounts[0].action).toBe('created')
  })

  it('the priced catalog needs products:read: a token without it sees what an anonymous caller sees', async () => {
    const agent = await start({ TOKENS: SCOPED })
    const catalog = (token: string | undefined) =>
      mcpOk(
        agent,
        token,
        'get_products',
        { buying_mode: 'wholesale' },
        'media-buy/get-products-response.json',
      )
    const priced = (answer: Body) =>
      (answer.products as Body[]).some((product) =>
        (product.pricing_options as Body[]).some(
          (option) => typeof option.fixed_price === 'number' || typeof option.floor_price === 'number',
        ),
      )
    const anonymous = await catalog(undefined)
    const buysOnly = await catalog(BUYS_ONLY)
    const reader = await catalog(READER)
    expect(priced(reader)).toBe(true)
    expect(priced(anonymous)).toBe(false)
    expect(priced(buysOnly)).toBe(false)
    expect(buysOnly.products).toEqual(anonymous.products)
  })
})
