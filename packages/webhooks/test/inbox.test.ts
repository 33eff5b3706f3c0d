import { MemoryReplayStore } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import {
  createMemoryInbox,
  createWebhookReceiver,
  MemoryClaimStore,
  MemoryConvergenceStore,
  WebhookError,
  type ReceivedEvent,
  type Registration,
} from '../src/index.js'
import { answer, envelope, NOW, sellerKey, signed as signedBy } from '../src/testing/receiver.js'

const key = sellerKey()
const signed = (payload: unknown) => signedBy(key, 'sig', payload)

/** A receiver publishing through a memory inbox (the same decisions as the durable stores' inboxes). */
function setup(protocol: '3.2' | '3.1' = '3.2', fail = (_event: ReceivedEvent) => false) {
  const registration: Registration = {
    id: 'sig',
    auth: { mode: 'rfc9421', keys: key.jwks },
    sender: 'https://seller.example.com/mcp',
    shape: 'mcp',
  }
  const claims = new MemoryClaimStore()
  const convergence = new MemoryConvergenceStore()
  const replay = new MemoryReplayStore()
  const published: ReceivedEvent[] = []
  const inbox = createMemoryInbox({
    claims,
    convergence,
    replay,
    write(event) {
      if (fail(event)) throw new Error('the sink is down')
      published.push(event)
    },
  })
  const receiver = createWebhookReceiver({
    registration: () => registration,
    claims,
    convergence,
    replayStore: replay,
    inbox,
    protocol,
    now: () => NOW,
  })
  return { receiver, published }
}

describe('receiver: the transactional inbox path', () => {
  it('publishes once, answers a retry duplicate and a changed payload 409', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    expect(await answer(await receiver.handle(await signed(payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await answer(await receiver.handle(await signed(payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    const changed = await answer(await receiver.handle(await signed({ ...payload, status: 'completed' })))
    expect(changed.status).toBe(409)
    expect(changed.body.error?.code).toBe('idempotency_key_reused')
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ idempotencyKey: payload.idempotency_key, takeover: false })
  })

  it('answers the same signed request again 401 replayed, with the Signature challenge', async () => {
    const { receiver } = setup()
    const request = await signed(envelope())
    const again = request.clone()
    expect((await receiver.handle(request)).status).toBe(200)
    const replayed = await receiver.handle(again)
    expect(replayed.status).toBe(401)
    expect(replayed.headers.get('www-authenticate')).toContain('webhook_signature_replayed')
  })

  it('converges terminal outcomes: a different terminal is 409, a later non-terminal stale', async () => {
    const { receiver, published } = setup()
    const task = `task_${crypto.randomUUID()}`
    const done = envelope({ task_id: task, status: 'completed', result: { media_buy_id: 'mb_1' } })
    expect((await receiver.handle(await signed(done))).status).toBe(200)
    const other = envelope({ task_id: task, status: 'failed', result: { errors: [] } })
    const conflict = await answer(await receiver.handle(await signed(other)))
    expect(conflict.status).toBe(409)
    expect(conflict.body.error?.code).toBe('terminal_conflict')
    expect(await answer(await receiver.handle(await signed(envelope({ task_id: task }))))).toEqual({
      status: 200,
      body: { status: 'stale' },
    })
    expect(published).toHaveLength(1)
  })

  it('answers 200 duplicate to a changed payload in 3.1 mode', async () => {
    const { receiver } = setup('3.1')
    const payload = envelope()
    await receiver.handle(await signed(payload))
    expect(await answer(await receiver.handle(await signed({ ...payload, status: 'failed' })))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
  })

  it('answers 503 publish_failed when the writer fails, and publishes the retry', async () => {
    let down = true
    const { receiver, published } = setup('3.2', () => down)
    const payload = envelope()
    const failed = await answer(await receiver.handle(await signed(payload)))
    expect(failed).toMatchObject({ status: 503, body: { error: { code: 'publish_failed' } } })
    down = false
    expect((await receiver.handle(await signed(payload))).status).toBe(200)
    expect(published).toHaveLength(1)
  })

  it('refuses options with neither publish nor inbox', () => {
    const make = () =>
      createWebhookReceiver({
        registration: () => undefined,
        claims: new MemoryClaimStore(),
        convergence: new MemoryConvergenceStore(),
        replayStore: new MemoryReplayStore(),
      })
    expect(make).toThrow(WebhookError)
  })
})
