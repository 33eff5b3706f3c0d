/**
 * Async work survives a restart: a sales agent on a real SQLite file takes a buy into the seller's review
 * (an MCP push_notification_config, and an A2A-only taskPushNotificationConfig, which also sends a buy to
 * review), a creative into review and a controller-forced submitted task, then closes mid-review. Started again
 * on the same file once the reviews are due, it finishes them: `working` and `completed` reach the buyer's
 * real receiver exactly once each, MCP envelopes with operation_id verbatim and context echoed, A2A-native
 * events on the A2A channel; the creative is approved (creative.status_changed once); force_task_completion
 * completes the forced task on the new process.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  KIT_SANDBOX,
  a2aSend,
  artifactData,
  buyRequest,
  displayCreative,
  expectOfficial,
  mcpOk,
  newKey,
  startTestAgent,
  tempDir,
  type Body,
} from '../test-support.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import { tickDueWork, DUE_KIND, LEASE_SECONDS, type DueWork, moveTask } from '@adwire/seller'

let offset = 0
const now = () => Date.now() / 1000 + offset
const env = {
  DATABASE_URL: `sqlite:${join(tempDir(), 'durable.sqlite')}`,
  BUY_REVIEW: 'always',
  CREATIVE_REVIEW: 'manual',
  REVIEW_SECONDS: '600',
}
let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent(env, { now })
  buyer = await startBuyerReceiver(agent.url, now)
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const ofTask = (taskId: string) => buyer.published.filter((event) => event.taskId === taskId)
const taskStatus = (taskId: string, token = BUYER_TOKEN) =>
  mcpOk(
    agent,
    token,
    'get_task_status',
    { task_id: taskId, include_result: true },
    'protocol/get-task-status-response.json',
  )
/** Resolves once no due work is stored (a tick may be finishing its last item). */
async function noDueWork(): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    if ((await agent.runtime.deps.storage.records.list(DUE_KIND)).length === 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error('due work is left')
}
const control = (scenario: string, params: Body = {}) =>
  mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true } },
    'compliance/comply-test-controller-response.json',
  )

describe('reviews and forced tasks across a restart', () => {
  it('finish on the restarted process, each webhook once', async () => {
    const creativePath = '/hooks/creative-status-changed/restart'
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_accounts',
      {
        idempotency_key: newKey(),
        accounts: [
          {
            ...ACCOUNT,
            billing: 'operator',
            payment_terms: 'net_30',
            notification_configs: [
              {
                subscriber_id: 'restart-sub',
                url: `${buyer.origin}${creativePath}`,
                event_types: ['creative.status_changed'],
              },
            ],
          },
        ],
      },
      'account/sync-accounts-response.json',
    )
    const synced = await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_creatives',
      { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('restart_creative')] },
      'creative/sync-creatives-response.json',
    )
    expect(synced.creatives[0]).toMatchObject({ creative_id: 'restart_creative', status: 'pending_review' })

    const context = { correlation_id: 'restart-mcp' }
    const operationId = crypto.randomUUID()
    const mcpTask = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        context,
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/restart`, operation_id: operationId },
      }),
      'media-buy/create-media-buy-response.json',
    )
    expect(mcpTask).toMatchObject({ status: 'submitted', task_id: expect.stringMatching(/^task_/) })
    // Registered only through A2A: still a push registration, so the buy goes to review.
    const a2aAnswer = artifactData(
      await a2aSend(
        agent,
        BUYER_TOKEN,
        'create_media_buy',
        buyRequest({ context: { correlation_id: 'restart-a2a' } }),
        { url: `${buyer.origin}/hooks/a2a/restart` },
      ),
    )
    expect(a2aAnswer).toMatchObject({ status: 'submitted', task_id: expect.stringMatching(/^task_/) })

    await control('force_create_media_buy_arm', { arm: 'submitted', task_id: 'task_forced_restart' })
    const forced = await mcpOk(
      agent,
      KIT_SANDBOX,
      'create_media_buy',
      buyRequest({
        account: { ...ACCOUNT, sandbox: true },
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/forced`, operation_id: 'op-forced' },
      }),
      'media-buy/create-media-buy-response.json',
    )
    expect(forced).toMatchObject({ status: 'submitted', task_id: 'task_forced_restart' })

    // Nothing is due yet: the tick finishes nothing, and the process goes away mid-review.
    expect(await tickDueWork(agent.runtime.deps.seller)).toBe(0)
    expect(await taskStatus(mcpTask.task_id)).toMatchObject({ status: 'submitted' })
    await agent.close()
    expect(ofTask(mcpTask.task_id)).toEqual([])

    offset += 601
    agent = await startTestAgent(env, { now })
    await buyer.waitFor(
      () =>
        ofTask(mcpTask.task_id).length >= 2 &&
        ofTask(a2aAnswer.task_id).length >= 2 &&
        buyer.published.some((event) => event.registrationId === 'hooks-creative-status-changed-restart'),
      30_000,
    )

    const pushes = ofTask(mcpTask.task_id)
    expect(pushes.map((event) => [event.shape, event.status])).toEqual([
      ['mcp', 'working'],
      ['mcp', 'completed'],
    ])
    for (const push of pushes) {
      expect(push.operationId).toBe(operationId)
      expect(push.payload.context).toEqual(context)
      expect(push.taskType).toBe('create_media_buy')
      expectOfficial('core/mcp-webhook-payload.json', push.payload)
    }
    const result = pushes[1]!.data as Body
    expectOfficial('media-buy/create-media-buy-response.json', result)
    expect(await taskStatus(mcpTask.task_id)).toMatchObject({
      status: 'completed',
      result: { media_buy_id: result.media_buy_id },
    })
    const read = await mcpOk(
      agent,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [result.media_buy_id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0]).toMatchObject({ media_buy_id: result.media_buy_id, context })

    expect(ofTask(a2aAnswer.task_id).map((event) => [event.shape, event.status])).toEqual([
      ['a2a', 'working'],
      ['a2a', 'completed'],
    ])
    const a2aBodies = buyer.deliveries
      .filter((delivery) => delivery.path === '/hooks/a2a/restart')
      .map((delivery) => JSON.parse(delivery.body))
    // An interim status is an A2A TaskStatusUpdateEvent.
    expect(JSON.stringify(a2aBodies[0])).toMatch(/status-update|statusUpdate/)
    expect(await taskStatus(a2aAnswer.task_id)).toMatchObject({ status: 'completed' })

    const listed = await mcpOk(
      agent,
      BUYER_TOKEN,
      'list_creatives',
      { filters: { creative_ids: ['restart_creative'] } },
      'creative/list-creatives-response.json',
    )
    expect(listed.creatives[0]).toMatchObject({ creative_id: 'restart_creative', status: 'approved' })
    const approvals = buyer.deliveries.filter(
      (delivery) =>
        delivery.path === creativePath &&
        delivery.body.includes('restart_creative') &&
        JSON.parse(delivery.answer).status === 'accepted',
    )
    expect(approvals).toHaveLength(1)
    expect(approvals[0]!.body).toContain('"to":"approved"')

    // The forced task completes on the new process, its completed webhook once.
    const forcedResult = {
      media_buy_id: 'mb_forced_restart',
      revision: 1,
      confirmed_at: '2031-01-01T00:00:00Z',
      packages: [],
    }
    expect(
      await control('force_task_completion', { task_id: 'task_forced_restart', result: forcedResult }),
    ).toMatchObject({ success: true, current_state: 'completed' })
    expect(
      await control('force_task_completion', { task_id: 'task_forced_restart', result: forcedResult }),
    ).toMatchObject({ success: false })
    await buyer.waitFor(() => ofTask('task_forced_restart').length >= 1)
    expect(ofTask('task_forced_restart').map((event) => [event.operationId, event.status])).toEqual([
      ['op-forced', 'completed'],
    ])

    // Nothing is left to do, and nothing fired twice.
    await noDueWork()
    expect(await tickDueWork(agent.runtime.deps.seller)).toBe(0)
    for (const path of ['/hooks/mcp/restart', '/hooks/a2a/restart', '/hooks/mcp/forced'])
      expect(
        buyer.deliveries.filter((delivery) => delivery.path === path && delivery.status !== 200),
      ).toEqual([])
    expect(ofTask(mcpTask.task_id)).toHaveLength(2)
    expect(ofTask(a2aAnswer.task_id)).toHaveLength(2)
  }, 120_000)

  it('resumes a review whose instance died between its steps, once its lease expires', async () => {
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/died`, operation_id: 'op-died' },
      }),
      'media-buy/create-media-buy-response.json',
    )
    const seller = agent.runtime.deps.seller
    const records = agent.runtime.deps.storage.records
    // Another instance claimed the review (its lease runs past the due time), moved the task to working, and
    // died before pushing anything.
    const due = (await records.list<DueWork>(DUE_KIND)).find((entry) => entry.body.ref === submitted.task_id)!
    const leaseUntil = now() + 601 + LEASE_SECONDS
    expect(
      await records.update(DUE_KIND, due.id, due.revision, { ...due.body, lease_until: leaseUntil }),
    ).toBe(true)
    expect(await moveTask(seller, submitted.task_id, 'submitted', 'working')).toBe(true)
    offset += 601
    // Due, but held: no tick takes it.
    expect(await tickDueWork(seller)).toBe(0)
    expect(ofTask(submitted.task_id)).toEqual([])

    // The lease expires: the next tick (the agent's own, or this one) resumes it from working.
    offset += LEASE_SECONDS + 1
    await tickDueWork(seller)
    await buyer.waitFor(() => ofTask(submitted.task_id).length >= 2, 30_000)
    expect(ofTask(submitted.task_id).map((event) => [event.operationId, event.status])).toEqual([
      ['op-died', 'working'],
      ['op-died', 'completed'],
    ])
    expect(await taskStatus(submitted.task_id)).toMatchObject({ status: 'completed' })
    await noDueWork()
  }, 120_000)
})
