/**
 * The controller's forced directives through the official MCP client with the sandbox test-kit key: the next
 * create_media_buy answers the forced submitted arm with the forced task_id (get_task_status follows it to
 * completion with force_task_completion), and force_upstream_unavailable makes get_products answer from its
 * cache with a STALE_RESPONSE advisory. Official schemas throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { ACCOUNT, KIT_SANDBOX, buyRequest, mcpOk, startTestAgent, type Body } from '../test-support.js'

const CONTROLLER = 'compliance/comply-test-controller-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const control = (scenario: string, params: Body = {}) =>
  mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true } },
    CONTROLLER,
  )
const ok = (token: string, task: string, args: Body, schema: string) =>
  mcpOk(agent, token, task, args, schema)
const sandboxAccount = { ...ACCOUNT, sandbox: true }

describe('forced directives', () => {
  it('drives the next create_media_buy into the submitted arm with the forced task_id', async () => {
    const forced = await control('force_create_media_buy_arm', {
      arm: 'submitted',
      task_id: 'task_async_signed_io_q2',
    })
    expect(forced.forced).toEqual({ arm: 'submitted', task_id: 'task_async_signed_io_q2' })
    const created = await ok(
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({ account: sandboxAccount }),
      'media-buy/create-media-buy-response.json',
    )
    expect(created).toMatchObject({ status: 'submitted', task_id: 'task_async_signed_io_q2' })
    expect(created.media_buy_id).toBeUndefined()
    const status = () =>
      ok(
        KIT_SANDBOX,
        'get_task_status',
        { task_id: 'task_async_signed_io_q2', include_result: true },
        'protocol/get-task-status-response.json',
      )
    expect(await status()).toMatchObject({ status: 'submitted', task_type: 'create_media_buy' })
    const result = {
      media_buy_id: 'mb_io_signed',
      revision: 1,
      confirmed_at: '2031-01-01T00:00:00Z',
      packages: [],
    }
    const completed = await control('force_task_completion', { task_id: 'task_async_signed_io_q2', result })
    expect(completed).toMatchObject({ success: true, current_state: 'completed' })
    expect(await status()).toMatchObject({ status: 'completed', result })
  })

  it('serves get_products from a stale cache with a STALE_RESPONSE advisory once the upstream is down', async () => {
    await control('force_upstream_unavailable', { tool: 'get_products', upstream_name: 'inventory-service' })
    const stale = await ok(
      KIT_SANDBOX,
      'get_products',
      { buying_mode: 'wholesale' },
      'media-buy/get-products-response.json',
    )
    expect(stale.products.length).toBeGreaterThan(0)
    expect(stale.errors[0]).toMatchObject({
      code: 'STALE_RESPONSE',
      details: { served_from_cache: true, cache_age_seconds: expect.any(Number) },
    })
    // Once: the next answer is healthy (no duration_seconds was given).
    const healthy = await ok(
      KIT_SANDBOX,
      'get_products',
      { buying_mode: 'wholesale' },
      'media-buy/get-products-response.json',
    )
    expect(healthy.errors ?? []).not.toContainEqual(expect.objectContaining({ code: 'STALE_RESPONSE' }))
  })

  it('with duration_seconds, every get_products answers stale until the upstream is back', async () => {
    await control('force_upstream_unavailable', {
      tool: 'get_products',
      upstream_name: 'inventory-service',
      duration_seconds: 3600,
    })
    for (let call = 0; call < 2; call++) {
      const stale = await ok(
        KIT_SANDBOX,
        'get_products',
        { buying_mode: 'wholesale' },
        'media-buy/get-products-response.json',
      )
      expect(stale.errors[0]).toMatchObject({ code: 'STALE_RESPONSE' })
    }
  })
})
