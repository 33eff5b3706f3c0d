/**
 * The buyer cancels a buy waiting in the seller's review (BUY_REVIEW=always, a long REVIEW_SECONDS): over MCP
 * with update_media_buy `canceled: true` on the task_id the `submitted` answer gave, over A2A with CancelTask (the
 * official A2A client) on the Task that answered `submitted`. The task ends `canceled`: stored (get_task_status),
 * and pushed exactly once to each registration (the MCP push_notification_config, `operation_id` verbatim, and
 * the A2A taskPushNotificationConfig), RFC 9421-signed to a real receiver. The review never books the buy, not
 * when it comes due, not even when the due work is put back by hand. A second cancel is NOT_CANCELLABLE (MCP) or
 * returns the canceled Task (A2A); another caller's cancel finds nothing, another buyer's with every permission
 * included (by task_id over MCP, by Task id over A2A).
 */
import { TaskState } from '@a2a-js/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DUE_KIND, type DueWork } from '@adwire/seller'
import type { RunningSalesAgent } from '../service.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  READER_TOKEN,
  TOKENS,
  a2aClient,
  a2aSend,
  artifactData,
  buyRequest,
  expectOfficial,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

/** Another buyer, with every permission: it may not touch buyer-1's tasks. */
const OTHER_BUYER = 'other-buyer-token-for-cancel-tests-0123456789'
let offset = 0
const now = () => Date.now() / 1000 + offset
let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent(
    {
      BUY_REVIEW: 'always',
      REVIEW_SECONDS: '600',
      TOKENS: `${TOKENS},buyer-2:${OTHER_BUYER}:read+write+delete+approve`,
    },
    { now },
  )
  buyer = await startBuyerReceiver(agent.url, now)
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const ofTask = (taskId: string) => buyer.published.filter((event) => event.taskId === taskId)
const deliveriesTo = (path: string) => buyer.deliveries.filter((delivery) => delivery.path === path)
const taskStatus = (taskId: string) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'get_task_status',
    { task_id: taskId, include_result: true, include_history: true },
    'protocol/get-task-status-response.json',
  )
const buyCount = async () =>
  (await mcpOk(agent, BUYER_TOKEN, 'get_media_buys', {}, 'media-buy/get-media-buys-response.json')).media_buys
    .length as number
const cancelBuy = (id: string) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'update_media_buy',
    {
      idempotency_key: newKey(),
      account: ACCOUNT,
      media_buy_id: id,
      canceled: true,
      cancellation_reason: 'plans changed',
    },
    'media-buy/update-media-buy-response.json',
  )
/** Lets the sender's worker and the due tick run a few rounds (nothing more may arrive). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 400))

/** The review comes due, and its due work is put back and run by hand: neither may book the canceled buy. */
async function reviewComesDue(taskId: string): Promise<void> {
  offset += 601
  const due: DueWork = { work: 'buy_review', ref: taskId, owner: 'buyer-1', due_at: 0 }
  await agent.runtime.deps.storage.records.put(DUE_KIND, `buy_review:${taskId}`, 'buyer-1', due)
  await agent.runtime.deps.due()
  await settle()
}

describe('canceling a buy in the seller review', () => {
  it('over MCP: update_media_buy canceled on the task_id ends the task canceled, pushed once; nothing booked', async () => {
    const before = await buyCount()
    const context = { correlation_id: 'cancel-mcp' }
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        context,
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/cancel`, operation_id: 'op-cancel-mcp' },
      }),
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted).toMatchObject({ status: 'submitted', context_id: expect.stringMatching(/^ctx_/) })
    const taskId = submitted.task_id as string
    expect(await taskStatus(taskId)).toMatchObject({ status: 'submitted', context_id: submitted.context_id })

    // Anything but a cancel waits for the booking.
    const paused = await mcpFails(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: taskId, paused: true },
      'INVALID_STATE',
    )
    expect(paused.field).toBe('media_buy_id')

    const canceled = await cancelBuy(taskId)
    expect(canceled).toMatchObject({
      status: 'completed',
      media_buy_id: taskId,
      media_buy_status: 'canceled',
    })

    await buyer.waitFor(() => ofTask(taskId).length === 1)
    const [push] = ofTask(taskId)
    expect(push).toMatchObject({
      shape: 'mcp',
      status: 'canceled',
      taskId,
      operationId: 'op-cancel-mcp',
      taskType: 'create_media_buy',
    })
    expect(push!.payload).toMatchObject({ context, context_id: submitted.context_id })
    expectOfficial('core/mcp-webhook-payload.json', push!.payload)

    const stored = await taskStatus(taskId)
    expect(stored).toMatchObject({ status: 'canceled', completed_at: expect.any(String) })
    expect(stored.result).toBeUndefined()
    expect(stored.history.map((entry: Body) => entry.data.status)).toEqual(['submitted', 'canceled'])

    // A second cancel: the buy is canceled already.
    const again = await mcpFails(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: taskId, canceled: true },
      'NOT_CANCELLABLE',
    )
    expect(again.details).toMatchObject({ task_status: 'canceled' })

    await reviewComesDue(taskId)
    expect(await taskStatus(taskId)).toMatchObject({ status: 'canceled' })
    expect(await buyCount()).toBe(before)
    expect(ofTask(taskId)).toHaveLength(1)
    expect(deliveriesTo('/hooks/mcp/cancel')).toHaveLength(1)
  })

  it('over A2A: CancelTask on the Task that answered submitted cancels the review, pushed once per channel', async () => {
    const before = await buyCount()
    const context = { correlation_id: 'cancel-a2a' }
    const task = await a2aSend(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        context,
        push_notification_config: {
          url: `${buyer.origin}/hooks/mcp/cancel-a2a`,
          operation_id: 'op-cancel-a2a',
        },
      }),
      { url: `${buyer.origin}/hooks/a2a/cancel-a2a` },
    )
    const answer = artifactData(task)
    expect(answer).toMatchObject({ status: 'submitted', context_id: task.contextId })
    const taskId = answer.task_id as string

    const client = await a2aClient(agent, BUYER_TOKEN)
    // Not another caller's to cancel.
    const reader = await a2aClient(agent, READER_TOKEN)
    await expect(reader.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(
      /not found/i,
    )
    expect(await taskStatus(taskId)).toMatchObject({ status: 'submitted' })

    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined })
    expect(canceled).toMatchObject({ id: task.id, status: { state: TaskState.TASK_STATE_CANCELED } })

    // The A2A channel names the A2A Task; the MCP channel the AdCP task, with its operation_id.
    await buyer.waitFor(() => ofTask(task.id).length === 1 && ofTask(taskId).length === 1)
    expect(ofTask(task.id).map((event) => [event.shape, event.status])).toEqual([['a2a', 'canceled']])
    expect(ofTask(taskId)[0]).toMatchObject({
      shape: 'mcp',
      status: 'canceled',
      operationId: 'op-cancel-a2a',
    })
    expectOfficial('core/mcp-webhook-payload.json', ofTask(taskId)[0]!.payload)
    const a2aBody = JSON.parse(deliveriesTo('/hooks/a2a/cancel-a2a')[0]!.body)
    expect(JSON.stringify(a2aBody)).toMatch(/TASK_STATE_CANCELED|"canceled"/)

    const polled = artifactData(
      await a2aSend(agent, BUYER_TOKEN, 'get_task_status', { task_id: taskId, include_history: true }),
    )
    expectOfficial('protocol/get-task-status-response.json', polled)
    expect(polled.status).toBe('canceled')

    // Canceled already: the Task as it is, nothing pushed again.
    const again = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined })
    expect(again.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const read = await client.getTask({ tenant: '', id: task.id, historyLength: 0 })
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED)

    await reviewComesDue(taskId)
    expect(await buyCount()).toBe(before)
    expect(deliveriesTo('/hooks/a2a/cancel-a2a')).toHaveLength(1)
    expect(deliveriesTo('/hooks/mcp/cancel-a2a')).toHaveLength(1)
  })

  it("another buyer, with every permission, cannot cancel or read buyer-1's buy in review", async () => {
    const task = await a2aSend(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({
        context: { correlation_id: 'cancel-other' },
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/cancel-other`, operation_id: 'op-other' },
      }),
    )
    const taskId = artifactData(task).task_id as string
    expect(await taskStatus(taskId)).toMatchObject({ status: 'submitted' })

    const refused = await mcpFails(
      agent,
      OTHER_BUYER,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: taskId, canceled: true },
      'MEDIA_BUY_NOT_FOUND',
    )
    expect(JSON.stringify(refused)).not.toContain('buyer-1')
    await mcpFails(agent, OTHER_BUYER, 'get_task_status', { task_id: taskId }, 'REFERENCE_NOT_FOUND')
    const other = await a2aClient(agent, OTHER_BUYER)
    await expect(other.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(
      /not found/i,
    )

    await settle()
    expect(await taskStatus(taskId)).toMatchObject({ status: 'submitted' })
    expect(ofTask(taskId)).toHaveLength(0)
    // Its owner still can.
    expect(await cancelBuy(taskId)).toMatchObject({ media_buy_id: taskId, media_buy_status: 'canceled' })
  })
})
