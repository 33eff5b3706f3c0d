/**
 * The Node sender defaults: the pinned fetch under the webhook URL policy is what createNodeWebhookSender
 * delivers with, so a loopback or credential-carrying URL is never reached unless development mode allows it.
 */
import { describe, expect, it } from 'vitest'
import { MemoryOutboxStore } from './memory-stores.js'
import { createNodeWebhookSender, webhookUrlProblem } from './node.js'
import { senderTestKit } from './testing/sender.js'

const kit = senderTestKit('seller-node-test')

describe('@adwire/webhooks/node', () => {
  it('names what is wrong with a destination', () => {
    expect(webhookUrlProblem('http://buyer.example/hook', false)).toBe('must be https')
    expect(webhookUrlProblem('https://user:pw@buyer.example/hook', true)).toMatch(/credentials/)
    expect(webhookUrlProblem('https://127.0.0.1/hook', false)).toBe('must be a public address')
    expect(webhookUrlProblem('https://buyer.example/hook', false)).toBeUndefined()
  })

  it('never delivers to a loopback receiver by default, and does with allowInsecureUrls', async () => {
    const buyer = await kit.endpoint()
    const registration = {
      channel: 'adcp' as const,
      config: { url: `${buyer.origin}/hook`, operation_id: 'op_node' },
    }
    const event = { task_id: 't1', task_type: 'create_media_buy', status: 'working' }

    const strictOutbox = new MemoryOutboxStore()
    const strict = createNodeWebhookSender({ outbox: strictOutbox, key: kit.key.privateJwk })
    await strict.notify(registration, event)
    await strict.drain()
    expect(buyer.requests).toHaveLength(0)
    const [attempt] = await strict.activity('op_node')
    expect(attempt?.status).not.toBe('success')

    const devOutbox = new MemoryOutboxStore()
    const dev = createNodeWebhookSender({
      outbox: devOutbox,
      key: kit.key.privateJwk,
      allowInsecureUrls: true,
      userAgent: 'node-test-agent',
    })
    await dev.notify(registration, event)
    await dev.drain()
    expect(buyer.requests).toHaveLength(1)
    expect(buyer.requests[0]!.headers['user-agent']).toBe('node-test-agent')
  })
})
