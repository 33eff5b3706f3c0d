/**
 * Two sales agents on one PostgreSQL schema (a fresh schema per run, dropped after) share the seller's due
 * reviews: buys taken into review on one are due on both, both tick at once, and each review is finished by
 * exactly one of them (the lease is claimed by compare-and-set): every task pushes `working` and `completed`
 * once each, every buy is committed once.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { BUYER_TOKEN, buyRequest, mcpOk, startTestAgent } from '../test-support.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import { tickDueWork, DUE_KIND } from '@adwire/seller'

const url = await resolveTestPostgresUrl()
const schema = freshSchemaName('sales_due')
let offset = 0
const now = () => Date.now() / 1000 + offset
let first: RunningSalesAgent
let second: RunningSalesAgent
let buyer: BuyerReceiver

describe.skipIf(!url)('due reviews on two instances of one PostgreSQL schema', () => {
  beforeAll(async () => {
    const env = {
      DATABASE_URL: url!,
      DATABASE_SCHEMA: schema,
      PUBLIC_URL: 'https://sales.pg.test',
      BUY_REVIEW: 'always',
      REVIEW_SECONDS: '600',
    }
    // The due ticks are run by the test, on both at once.
    first = await startTestAgent(env, { now, dueTickMs: 0 })
    second = await startTestAgent(env, { now, dueTickMs: 0 })
    buyer = await startBuyerReceiver(first.url, now)
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await buyer?.close()
    await dropSchema(url!, schema)
  })

  it('finishes each review once, whichever instance claims it', async () => {
    const tasks: string[] = []
    for (let index = 0; index < 4; index++) {
      const submitted = await mcpOk(
        index % 2 === 0 ? first : second,
        BUYER_TOKEN,
        'create_media_buy',
        buyRequest({
          push_notification_config: {
            url: `${buyer.origin}/hooks/mcp/pg-${index}`,
            operation_id: `op-pg-${index}`,
          },
        }),
        'media-buy/create-media-buy-response.json',
      )
      expect(submitted.status).toBe('submitted')
      tasks.push(submitted.task_id)
    }
    offset += 601
    const ran = await Promise.all([
      tickDueWork(first.runtime.deps.seller),
      tickDueWork(second.runtime.deps.seller),
    ])
    expect(ran[0] + ran[1]).toBe(4)
    expect(await first.runtime.deps.storage.records.list(DUE_KIND)).toEqual([])
    // Both pushes of every task reach the buyer; each is delivered once.
    await buyer.waitFor(
      (published) =>
        tasks.every(
          (task, index) =>
            buyer.deliveries.filter((delivery) => delivery.path === `/hooks/mcp/pg-${index}`).length >= 2 &&
            published.some((event) => event.taskId === task && event.status === 'completed'),
        ),
      30_000,
    )
    // Another round on both finds nothing left.
    expect(await tickDueWork(first.runtime.deps.seller)).toBe(0)
    expect(await tickDueWork(second.runtime.deps.seller)).toBe(0)
    const buys = new Set<string>()
    for (const [index, task] of tasks.entries()) {
      const delivered = buyer.deliveries.filter((delivery) => delivery.path === `/hooks/mcp/pg-${index}`)
      expect(delivered.map((delivery) => delivery.status)).toEqual([200, 200])
      expect(
        delivered.map((delivery) => (JSON.parse(delivery.body) as { status: string }).status).sort(),
      ).toEqual(['completed', 'working'])
      // Pushes may arrive out of order (AdCP: delivery is at-least-once, in no guaranteed order): the buyer
      // publishes `completed` once, and `working` only when it came first (after it, `working` is stale).
      const pushes = buyer.published.filter((event) => event.taskId === task)
      const statuses = pushes.map((event) => [event.operationId, event.status])
      expect(statuses).toEqual([
        ...(statuses.length === 2 ? [[`op-pg-${index}`, 'working']] : []),
        [`op-pg-${index}`, 'completed'],
      ])
      buys.add((pushes.at(-1)!.data as { media_buy_id: string }).media_buy_id)
    }
    expect(buys.size).toBe(4)
    const listed = await mcpOk(
      second,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [...buys] },
      'media-buy/get-media-buys-response.json',
    )
    expect(listed.media_buys).toHaveLength(4)
  }, 120_000)
})
