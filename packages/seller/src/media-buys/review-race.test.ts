/**
 * The buyer's cancel against the review's booking, on a real SQLite file: the review read its task `working`,
 * the buyer canceled it before the booking committed. The booking then rolls back (no buy, the task stays
 * `canceled`), where a check made only at the read would book a canceled buy; a cancel that arrives while the
 * ad server books the order has the order canceled there too. The other order: a review that booked first
 * leaves the cancel nothing to cancel.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TaskContext } from '@adwire/agent-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cancelTask } from '../async/cancel-task.js'
import { moveTask, TASK_KIND, type TaskRecord } from '../async/task-records.js'
import { openSeller } from '../open/open-seller.js'
import type { SellerRuntime } from '../open/types.js'
import type { OrderAction } from '../platform.js'
import { homepageCatalog, testSettings } from '../testing/fixtures.js'
import { bookReviewedBuy, createMediaBuy, finishBuyReview } from './create.js'
import { BUY_KIND } from './repository.js'

const dir = mkdtempSync(join(tmpdir(), 'adwire-review-race-'))
const settings = testSettings({ buyReview: 'always', reviewSeconds: 3600, allowInsecureWebhookUrls: true })
const catalog = homepageCatalog()
const OWNER = 'buyer-1'

/** The ad server: the orders it booked and changed; `duringBooking` runs while it books one. */
const booked: string[] = []
const changed: [string, OrderAction][] = []
let duringBooking: (() => Promise<void>) | undefined

let runtime: SellerRuntime
beforeAll(async () => {
  runtime = await openSeller({
    settings,
    catalog,
    delivery: () => [],
    database: { kind: 'sqlite', path: join(dir, 'seller.sqlite') },
    publicUrl: 'https://seller.example',
    platform: {
      async createOrder(buy) {
        booked.push(buy.media_buy_id)
        await duringBooking?.()
      },
      async updateOrder({ before, action }) {
        changed.push([before.media_buy_id, action])
      },
    },
  })
})
afterAll(async () => {
  await runtime?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A call of buyer-1 registered for pushes (a closed local port: nothing is ever delivered). */
const context = (): TaskContext => ({
  principal: { principal_id: OWNER, permissions: { media_buys: ['read', 'write', 'delete'] } },
  envelope: {},
  protocol: 'mcp',
  now: new Date(),
  updates: () => ({ update: async () => {} }),
  webhooks: {
    task: 'create_media_buy',
    registrations: [
      {
        channel: 'adcp',
        config: { url: 'http://127.0.0.1:9/hook', operation_id: `op-${crypto.randomUUID()}` },
      },
    ],
  },
})

/** A buy taken into review and its task moved to `working`, as the review reads it before booking. */
async function reviewRead() {
  const { seller } = runtime
  const answer = await createMediaBuy(
    seller,
    {
      idempotency_key: `key_${crypto.randomUUID()}`,
      account: { brand: { domain: 'acme.example' }, operator: 'acme.example' },
      brand: { domain: 'acme.example' },
      start_time: 'asap',
      end_time: '2099-06-30T23:59:59Z',
      packages: [{ product_id: 'homepage', pricing_option_id: 'cpm', budget: 5000 }],
    },
    context(),
  )
  expect(answer.status).toBe('submitted')
  const taskId = answer.task_id as string
  expect(await moveTask(seller, taskId, 'submitted', 'working')).toBe(true)
  const stored = (await seller.records.get<TaskRecord>(TASK_KIND, taskId))!
  return { taskId, stored, bookedId: stored.body.pending_buy!.media_buy_id }
}

describe('a cancel racing the review', () => {
  it('wins when it commits between the review reading the task and booking: nothing is booked', async () => {
    const { seller } = runtime
    const { taskId, stored, bookedId } = await reviewRead()
    expect((await cancelTask(seller, OWNER, taskId))?.canceled).toBe(true)
    await bookReviewedBuy(seller, stored)
    expect(await seller.records.get(BUY_KIND, bookedId)).toBeUndefined()
    expect((await seller.records.get<TaskRecord>(TASK_KIND, taskId))!.body.status).toBe('canceled')
  })

  it('finds nothing to cancel once the review has booked the buy', async () => {
    const { seller } = runtime
    const { taskId, stored, bookedId } = await reviewRead()
    await bookReviewedBuy(seller, stored)
    expect((await seller.records.get(BUY_KIND, bookedId))?.owner).toBe(OWNER)
    const late = await cancelTask(seller, OWNER, taskId)
    expect(late).toMatchObject({ canceled: false, task: { status: 'completed' } })
    expect(await cancelTask(seller, 'someone-else', taskId)).toBeUndefined()
  })

  it('cancels the order in the ad server when the buyer cancels while it is being booked', async () => {
    const { seller } = runtime
    const { taskId, bookedId } = await reviewRead()
    duringBooking = async () => {
      expect((await cancelTask(seller, OWNER, taskId))?.canceled).toBe(true)
    }
    try {
      await finishBuyReview(seller, taskId)
    } finally {
      duringBooking = undefined
    }
    expect(booked).toContain(bookedId)
    expect(changed).toContainEqual([bookedId, 'cancel'])
    expect(await seller.records.get(BUY_KIND, bookedId)).toBeUndefined()
    expect((await seller.records.get<TaskRecord>(TASK_KIND, taskId))!.body.status).toBe('canceled')
  })
})
