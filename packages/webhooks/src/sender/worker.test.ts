import { generateSigningKey, type GeneratedSigningKey } from '@adwire/http-signatures'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MemoryOutboxStore } from '../memory-stores.js'
import { createWebhookSender } from './sender.js'
import { manualClock, startEndpoint, type Responder, type TestEndpoint } from '../testing/sender.js'
import type { SenderLogEntry, WebhookRegistration } from './types.js'

let key: GeneratedSigningKey
beforeAll(async () => {
  key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-worker-test' })
})

const endpoints: TestEndpoint[] = []
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()))
})

async function endpoint(fallback: Responder) {
  const started = await startEndpoint({ fallback })
  endpoints.push(started)
  return started
}

const registration = (url: string): WebhookRegistration => ({
  channel: 'adcp',
  config: { url, operation_id: 'op_worker' },
})
const event = (index: number) => ({
  task_id: `task_${index}`,
  task_type: 'build_creative',
  status: 'working',
  result: { percentage: index },
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('the delivery worker', () => {
  it('delivers what is enqueued while it runs, with at most `concurrency` attempts in flight', async () => {
    let inFlight = 0
    let most = 0
    const buyer = await endpoint(async (_request, response) => {
      inFlight += 1
      most = Math.max(most, inFlight)
      await sleep(30)
      inFlight -= 1
      response.writeHead(204).end()
    })
    const sender = createWebhookSender({
      outbox: new MemoryOutboxStore(),
      key: key.privateJwk,
      concurrency: 2,
      pollIntervalMs: 5_000,
    })
    sender.start()
    sender.start()
    try {
      for (let index = 0; index < 6; index += 1)
        await sender.notify(registration(`${buyer.origin}/w`), event(index))
      await buyer.waitFor(6)
    } finally {
      await sender.stop()
    }
    expect(most).toBe(2)
    const rows = await sender.activity('op_worker')
    expect(rows.map((row) => [row.status, row.http_status_code])).toEqual(Array(6).fill(['success', 204]))
  })

  it('stop() waits for the attempts in flight to be recorded', async () => {
    const buyer = await endpoint(async (_request, response) => {
      await sleep(150)
      response.writeHead(200).end()
    })
    const sender = createWebhookSender({
      outbox: new MemoryOutboxStore(),
      key: key.privateJwk,
      pollIntervalMs: 10,
    })
    await sender.notify(registration(`${buyer.origin}/w`), event(1))
    sender.start()
    await buyer.waitFor(1)
    await sender.stop()
    expect((await sender.activity('op_worker')).map((row) => row.status)).toEqual(['success'])
  })

  it('re-leases an entry whose lease ended mid-attempt; the late worker logs lease_lost and records nothing', async () => {
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    const buyer = await endpoint(async (_request, response) => {
      calls += 1
      if (calls === 1) await held
      response.writeHead(200).end()
    })
    const clock = manualClock()
    const outbox = new MemoryOutboxStore()
    const logs: SenderLogEntry[] = []
    const options = { outbox, key: key.privateJwk, now: clock.now, leaseSeconds: 30 }
    const slow = createWebhookSender({ ...options, log: (entry) => void logs.push(entry) })
    const other = createWebhookSender(options)
    await slow.notify(registration(`${buyer.origin}/w`), event(1))
    const slowDrain = slow.drain()
    await buyer.waitFor(1)
    clock.advance(31)
    await other.drain()
    release()
    await slowDrain
    expect(buyer.requests).toHaveLength(2)
    expect(buyer.requests[1]!.text).toBe(buyer.requests[0]!.text)
    expect(logs.map((entry) => entry.event)).toEqual(['enqueued', 'lease_lost'])
    expect((await slow.activity('op_worker')).map((row) => [row.status, row.attempt])).toEqual([
      ['success', 1],
    ])
    expect(await outbox.pending()).toEqual([])
  })
})
