/**
 * A review that needs the buyer (REVIEW_PO_THRESHOLD): a buy above the threshold sent without `po_number` goes
 * `submitted`, then `working` and `input-required` (APPROVAL_REQUIRED, a VALIDATION_ERROR on `po_number`) are
 * pushed and stored; get_task_status says what is needed. The buyer answers in the task's session: over MCP a
 * create_media_buy carrying the `context_id` of the `submitted` answer, over A2A (the official client) a message
 * in the same contextId; with `po_number` the answer is `submitted` with the same task_id, and `working` and
 * `completed` follow, pushed to a real receiver (RFC 9421) with operation_id and context verbatim; the booked buy
 * carries the purchase order. A buy sent with its purchase order never waits.
 */
import { Role, type Task } from '@a2a-js/sdk'
import { ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import {
  BUYER_TOKEN,
  a2aClient,
  a2aSend,
  artifactData,
  buyRequest,
  expectOfficial,
  mcpFails,
  mcpOk,
  startTestAgent,
  type Body,
} from '../test-support.js'

let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent({ BUY_REVIEW: 'always', REVIEW_SECONDS: '0', REVIEW_PO_THRESHOLD: '4000' })
  buyer = await startBuyerReceiver(agent.url)
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const ofTask = (taskId: string) => buyer.published.filter((event) => event.taskId === taskId)
const statuses = (taskId: string) => ofTask(taskId).map((event) => event.status)
const taskStatus = (taskId: string) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'get_task_status',
    { task_id: taskId, include_result: true, include_history: true },
    'protocol/get-task-status-response.json',
  )
const create = (extra: Body) =>
  mcpOk(agent, BUYER_TOKEN, 'create_media_buy', buyRequest(extra), 'media-buy/create-media-buy-response.json')
const storedBuy = async (mediaBuyId: string) =>
  (await agent.runtime.deps.storage.records.get<Body>('media_buy', mediaBuyId))?.body

/** The `input-required` push of a task: the reason and the field the review needs. */
function expectAsksForPo(data: Body): void {
  expectOfficial('media-buy/create-media-buy-async-response-input-required.json', data)
  expect(data.reason).toBe('APPROVAL_REQUIRED')
  expect(data.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'po_number' })
}

/** An A2A message in an existing session (contextId): the A2A profile's way to answer. */
async function a2aInSession(contextId: string, skill: string, input: Body): Promise<Task> {
  const client = await a2aClient(agent, BUYER_TOKEN)
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId,
        taskId: '',
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'data', value: { skill, input } },
            metadata: undefined,
            filename: '',
            mediaType: 'application/json',
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    },
    { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
  )
  return result as Task
}

describe('a review that needs the buyer’s purchase order', () => {
  it('over MCP: input-required pushed and stored, the follow-up with context_id resumes it to completed', async () => {
    const context = { correlation_id: 'po-mcp' }
    const push = { url: `${buyer.origin}/hooks/mcp/po`, operation_id: 'op-po-mcp' }
    const submitted = await create({ context, push_notification_config: push }) // budget 5000, no po_number
    expect(submitted).toMatchObject({ status: 'submitted', context_id: expect.stringMatching(/^ctx_/) })
    const taskId = submitted.task_id as string

    await buyer.waitFor(() => ofTask(taskId).length === 2)
    expect(statuses(taskId)).toEqual(['working', 'input-required'])
    const asked = ofTask(taskId)[1]!
    expect(asked).toMatchObject({ taskId, operationId: 'op-po-mcp', taskType: 'create_media_buy' })
    expect(asked.payload).toMatchObject({
      status: 'input-required',
      context,
      context_id: submitted.context_id,
    })
    expectOfficial('core/mcp-webhook-payload.json', asked.payload)
    expectAsksForPo(asked.data)

    const waiting = await taskStatus(taskId)
    expect(waiting).toMatchObject({ status: 'input-required', context_id: submitted.context_id })
    expect(waiting.message).toMatch(/po_number/)
    expect(waiting.result).toBeUndefined()

    // The answer must carry what was asked for; the task keeps waiting meanwhile.
    const missing = await mcpFails(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({ context, context_id: submitted.context_id }),
      'VALIDATION_ERROR',
    )
    expect(missing.field).toBe('po_number')
    expect((await taskStatus(taskId)).status).toBe('input-required')

    const answered = await create({ context, context_id: submitted.context_id, po_number: 'PO-4711' })
    expect(answered).toMatchObject({ status: 'submitted', task_id: taskId, context_id: submitted.context_id })

    await buyer.waitFor(() => ofTask(taskId).length === 4)
    expect(statuses(taskId)).toEqual(['working', 'input-required', 'working', 'completed'])
    for (const event of ofTask(taskId)) {
      expect(event.operationId).toBe('op-po-mcp')
      expect(event.payload.context).toEqual(context)
      expectOfficial('core/mcp-webhook-payload.json', event.payload)
    }
    const result = ofTask(taskId)[3]!.data as Body
    expectOfficial('media-buy/create-media-buy-response.json', result)
    const done = await taskStatus(taskId)
    expect(done).toMatchObject({ status: 'completed', result: { media_buy_id: result.media_buy_id } })
    expect(done.history.map((entry: Body) => entry.data.status)).toEqual([
      'submitted',
      'working',
      'input-required',
      'working',
      'completed',
    ])
    expect((await storedBuy(result.media_buy_id)).po_number).toBe('PO-4711')
  })

  it('over MCP: a buy sent with its purchase order is never held', async () => {
    const submitted = await create({
      po_number: 'PO-1',
      push_notification_config: { url: `${buyer.origin}/hooks/mcp/po-given`, operation_id: 'op-po-given' },
    })
    await buyer.waitFor(() => ofTask(submitted.task_id).length === 2)
    expect(statuses(submitted.task_id)).toEqual(['working', 'completed'])
  })

  it('over A2A: input-required pushed as an A2A event, a message in the same contextId resumes it', async () => {
    const task = await a2aSend(agent, BUYER_TOKEN, 'create_media_buy', buyRequest(), {
      url: `${buyer.origin}/hooks/a2a/po`,
    })
    const answer = artifactData(task)
    expect(answer).toMatchObject({ status: 'submitted', context_id: task.contextId })
    const taskId = answer.task_id as string

    // The A2A channel names the A2A Task the buyer holds.
    await buyer.waitFor(() => ofTask(task.id).length === 2)
    expect(ofTask(task.id).map((event) => [event.shape, event.status])).toEqual([
      ['a2a', 'working'],
      ['a2a', 'input-required'],
    ])
    expectAsksForPo(ofTask(task.id)[1]!.data)
    const bodies = buyer.deliveries.filter((delivery) => delivery.path === '/hooks/a2a/po')
    expect(bodies[1]!.body).toContain('TASK_STATE_INPUT_REQUIRED')

    const followUp = await a2aInSession(
      task.contextId,
      'create_media_buy',
      buyRequest({ po_number: 'PO-A2A' }),
    )
    expect(followUp.id).not.toBe(task.id)
    expect(artifactData(followUp)).toMatchObject({
      status: 'submitted',
      task_id: taskId,
      context_id: task.contextId,
    })

    await buyer.waitFor(() => ofTask(task.id).length === 4)
    expect(ofTask(task.id).map((event) => event.status)).toEqual([
      'working',
      'input-required',
      'working',
      'completed',
    ])
    const result = ofTask(task.id)[3]!.data as Body
    expectOfficial('media-buy/create-media-buy-response.json', result)
    const polled = artifactData(
      await a2aSend(agent, BUYER_TOKEN, 'get_task_status', { task_id: taskId, include_result: true }),
    )
    expectOfficial('protocol/get-task-status-response.json', polled)
    expect(polled).toMatchObject({ status: 'completed', result: { media_buy_id: result.media_buy_id } })
    expect((await storedBuy(result.media_buy_id)).po_number).toBe('PO-A2A')
  })
})
