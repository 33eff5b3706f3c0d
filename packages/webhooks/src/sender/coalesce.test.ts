import { describe, expect, it } from 'vitest'
import { MemoryOutboxStore } from '../memory-stores.js'
import { createWebhookSender } from './sender.js'
import { senderTestKit } from '../testing/sender.js'
import type { WebhookSenderOptions } from './types.js'

const kit = senderTestKit('seller-coalesce-test')
const setup = (overrides: Partial<WebhookSenderOptions> = {}) => kit.buyerSetup(overrides)

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { code?: string; message?: string }) => ({ code: error.code, message: error.message }),
  )

const impairment = (id: string, state: string) => ({
  task_id: 'task_buy',
  task_type: 'create_media_buy',
  status: 'completed',
  notification_id: `imp_${id}`,
  message: `creative ${id} ${state}`,
})

describe('coalescence', () => {
  it('merges changes of one resource within the window, never past the declared maximum', async () => {
    const { sender, registration, bodies, clock, outbox } = await setup({
      coalesce: { impairment: { windowSeconds: 60, maxDelaySeconds: 150 } },
    })
    const start = clock.now()
    const events = registration('events')
    const fireTimes: number[] = []
    for (const [offset, state] of [
      [0, 'a'],
      [50, 'b'],
      [100, 'c'],
      [140, 'd'],
    ] as const) {
      clock.set(start + offset)
      await sender.notify(events, impairment('cr_1', state), { coalesce: { key: 'creative:cr_1' } })
      const pending = await outbox.pending()
      expect(pending).toHaveLength(1)
      fireTimes.push(pending[0]!.nextAttemptAt - start)
    }
    expect(fireTimes).toEqual([60, 110, 150, 150])
    await sender.notify(events, impairment('cr_2', 'x'), { coalesce: { key: 'creative:cr_2' } })
    clock.set(start + 149)
    await sender.drain()
    expect(bodies()).toHaveLength(0)
    clock.set(start + 150)
    await sender.drain()
    expect(bodies().map((body) => body.message)).toEqual(['creative cr_1 d'])
    clock.set(start + 200)
    await sender.drain()
    expect(bodies().map((body) => body.message)).toEqual(['creative cr_1 d', 'creative cr_2 x'])
  })

  it('sends latency-sensitive events at once, uncoalesced', async () => {
    const { sender, registration, bodies } = await setup()
    const events = registration('events')
    const fraud = { coalesce: { key: 'fraud:site_1', class: 'latency-sensitive' } }
    await sender.notify(events, impairment('f1', 'flagged'), fraud)
    await sender.notify(events, impairment('f1', 'confirmed'), fraud)
    await sender.drain()
    expect(bodies().map((body) => body.message)).toEqual(['creative f1 flagged', 'creative f1 confirmed'])
  })

  it('refuses classes that break the AdCP limits without the receiver opt-in, and unknown classes', async () => {
    const options = { outbox: new MemoryOutboxStore(), key: kit.key.privateJwk }
    expect(() =>
      createWebhookSender({
        ...options,
        coalesce: { impairment: { windowSeconds: 600, maxDelaySeconds: 600 } },
      }),
    ).toThrow(expect.objectContaining({ code: 'webhook_sender_options_invalid' }))
    expect(() =>
      createWebhookSender({
        ...options,
        coalesce: { 'latency-sensitive': { windowSeconds: 60, maxDelaySeconds: 60 } },
      }),
    ).toThrow(/opt-in/)
    expect(() =>
      createWebhookSender({
        ...options,
        coalesce: { indicator: { windowSeconds: 90, maxDelaySeconds: 60 } },
      }),
    ).toThrow(/exceeds/)
    expect(() =>
      createWebhookSender({
        ...options,
        coalesce: { impairment: { windowSeconds: 600, maxDelaySeconds: 900, receiverOptIn: true } },
      }),
    ).not.toThrow()
    const { sender, registration } = await setup()
    expect(
      await rejection(
        sender.notify(registration('e'), impairment('x', 'y'), { coalesce: { key: 'k', class: 'nope' } }),
      ),
    ).toMatchObject({ code: 'INVALID_REQUEST' })
  })
})
