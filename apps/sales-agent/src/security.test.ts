/**
 * The sales agent's security defaults (issue 22), through the official MCP and A2A clients: comply_test_controller
 * is off unless COMPLY_TEST_CONTROLLER=1 (refused with UNSUPPORTED_FEATURE, nothing seeded, not advertised).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { parseEnv } from './env.js'
import type { RunningSalesAgent } from './service.js'
import { KIT_SANDBOX, mcpCall, mcpError, mcpOk, startTestAgent, type Body } from './test-support.js'

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
