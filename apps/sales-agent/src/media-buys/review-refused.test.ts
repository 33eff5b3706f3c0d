/**
 * A review that refuses (REVIEW_CREDIT_LIMIT): create_media_buy answers `submitted`, then `working` and `failed`
 * are pushed to the buyer (RFC 9421, verified against the agent's brand.json keys) with BUDGET_EXCEEDED and the
 * buyer's context; get_task_status reads `failed` with the same errors, and nothing is booked. A buy within the
 * limit completes as before.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import {
  BUYER_TOKEN,
  KIT_SANDBOX,
  buyRequest,
  expectOfficial,
  mcpOk,
  startTestAgent,
} from '../test-support.js'

let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent({ BUY_REVIEW: 'always', REVIEW_SECONDS: '0', REVIEW_CREDIT_LIMIT: '4000' })
  buyer = await startBuyerReceiver(agent.url)
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const create = (budget: number, id: string) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'create_media_buy',
    buyRequest(
      {
        context: { correlation_id: id },
        push_notification_config: { url: `${buyer.origin}/hooks/mcp/${id}`, operation_id: `op-${id}` },
      },
      { budget },
    ),
    'media-buy/create-media-buy-response.json',
  )
const ofTask = (taskId: string) => buyer.published.filter((event) => event.taskId === taskId)

it('pushes working then failed with BUDGET_EXCEEDED, get_task_status says failed, and books nothing', async () => {
  const before = await mcpOk(
    agent,
    BUYER_TOKEN,
    'get_media_buys',
    {},
    'media-buy/get-media-buys-response.json',
  )
  const submitted = await create(5000, 'over-limit')
  expect(submitted.status).toBe('submitted')
  await buyer.waitFor(() => ofTask(submitted.task_id).length === 2)
  const [working, failed] = ofTask(submitted.task_id)
  expect([working!.status, failed!.status]).toEqual(['working', 'failed'])
  const result = (failed!.payload as { result: { errors: { code: string }[]; context: unknown } }).result
  expectOfficial('core/mcp-webhook-payload.json', failed!.payload)
  expect(result.errors[0]!.code).toBe('BUDGET_EXCEEDED')
  expect(result.context).toEqual({ correlation_id: 'over-limit' })
  const status = await mcpOk(
    agent,
    BUYER_TOKEN,
    'get_task_status',
    { task_id: submitted.task_id, include_result: true },
    'protocol/get-task-status-response.json',
  )
  expect(status.status).toBe('failed')
  const after = await mcpOk(
    agent,
    BUYER_TOKEN,
    'get_media_buys',
    {},
    'media-buy/get-media-buys-response.json',
  )
  expect(after.media_buys.length).toBe(before.media_buys.length)

  const within = await create(3000, 'within-limit')
  await buyer.waitFor(() => ofTask(within.task_id).length === 2)
  expect(ofTask(within.task_id).map((event) => event.status)).toEqual(['working', 'completed'])
})

it("get_task_status shows every push attempt of the task's statuses, a refused one too", async () => {
  buyer.failNext('/hooks/mcp/traced', 1)
  const submitted = await create(3000, 'traced')
  const attempts = async () =>
    (
      await mcpOk(
        agent,
        BUYER_TOKEN,
        'get_task_status',
        { task_id: submitted.task_id },
        'protocol/get-task-status-response.json',
      )
    ).ext?.adwire?.task_push_activity as { status: string; http_status_code: number; destination: string }[]
  // The first push (working) is refused with 503: the attempt is there for the buyer to read, retried later.
  await buyer.waitFor(() => buyer.deliveries.some((delivery) => delivery.path === '/hooks/mcp/traced'))
  let seen = await attempts()
  for (let poll = 0; poll < 100 && !seen?.some((attempt) => attempt.http_status_code === 503); poll++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    seen = await attempts()
  }
  expect(seen.some((attempt) => attempt.http_status_code === 503 && attempt.status !== 'success')).toBe(true)
  for (const attempt of seen) expect(attempt.destination).toBe(`task:${submitted.task_id}`)

  // Another caller choosing the same operation_id sees its own task's attempts only.
  const other = await mcpOk(
    agent,
    KIT_SANDBOX,
    'create_media_buy',
    buyRequest(
      {
        push_notification_config: {
          url: `${buyer.origin}/hooks/mcp/traced-other`,
          operation_id: 'op-traced',
        },
      },
      { budget: 3000 },
    ),
    'media-buy/create-media-buy-response.json',
  )
  await buyer.waitFor(() => ofTask(other.task_id).length === 2)
  const theirs = (
    await mcpOk(
      agent,
      KIT_SANDBOX,
      'get_task_status',
      { task_id: other.task_id },
      'protocol/get-task-status-response.json',
    )
  ).ext.adwire.task_push_activity as { destination: string; http_status_code: number }[]
  expect(theirs.map((attempt) => [attempt.destination, attempt.http_status_code])).toEqual([
    [`task:${other.task_id}`, 200],
    [`task:${other.task_id}`, 200],
  ])
})
