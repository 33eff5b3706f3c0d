/**
 * The relay over the receiver's SQLite event rows into a test sink: each event published once with its stable
 * id, a refusal retried with back-off and shown in status(), a broker that is down leaves everything pending
 * until it is back, and a crash between the publish and the mark repeats the publish with the same id.
 */
import { join } from 'node:path'
import { sinkMessageId, type Sink, type SinkMessage, type SinkOutcome } from '@adwire/webhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from './db/open.js'
import type { NewEvent, ReceiverDatabase } from './db/types.js'
import { createForwarder, forwardBody, type Forwarder } from './forwarder.js'
import { api, startTestReceiver, tempDir } from './testing/receiver.js'

const SENDER = 'rfc9421:https://seller.example.com'
const T0 = 1_776_520_800

/** A broker in a test: records what it confirms, refuses the ids it is told to, or is down altogether. */
class TestSink implements Sink {
  readonly kind = 'test'
  readonly target = 'test://broker'
  readonly confirmed: SinkMessage[] = []
  readonly attempts: SinkMessage[] = []
  readonly refuse = new Map<string, string>()
  down = false
  closed = false

  async publish(messages: readonly SinkMessage[]): Promise<readonly SinkOutcome[]> {
    if (this.down) throw new Error('connection refused')
    this.attempts.push(...messages)
    return messages.map((message): SinkOutcome => {
      const error = this.refuse.get(message.id)
      if (error) return { ok: false, error }
      this.confirmed.push(message)
      return { ok: true }
    })
  }

  async close(): Promise<void> {
    this.closed = true
  }
}

const event = (key: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  registrationId: 'reg_1',
  sender: SENDER,
  idempotencyKey: key,
  operationId: 'op_1',
  taskId: 'task_1',
  taskType: 'create_media_buy',
  status: 'completed',
  terminal: true,
  receivedAt: T0,
  payload: JSON.stringify({ idempotency_key: key, status: 'completed' }),
  forward: true,
  ...extra,
})

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close()
})

async function openDb(): Promise<Storage> {
  const storage = await openStorage({ kind: 'sqlite', path: join(tempDir(), 'receiver.sqlite') })
  cleanup.push(() => storage.close())
  return storage
}

/** A relay on a clock the test moves; no jitter, first retry after 10 s, lease 60 s. */
function relay(db: ReceiverDatabase, sink: Sink, clock: { now: number }): Forwarder {
  const forwarder = createForwarder({
    db,
    sink,
    now: () => clock.now,
    random: () => 0,
    baseDelaySeconds: 10,
    maxDelaySeconds: 300,
    leaseSeconds: 60,
    intervalMs: 0,
  })
  cleanup.push(() => forwarder.stop())
  return forwarder
}

describe('the relay into a sink', () => {
  it('publishes each pending event once, with its stable id, body and routing headers', async () => {
    const { db } = await openDb()
    for (const key of ['k1', 'k2', 'k3']) await db.recordEvent(event(key))
    await db.recordEvent(event('not-forwarded', { forward: false }))
    const sink = new TestSink()
    const clock = { now: T0 + 5 }
    const forwarder = relay(db, sink, clock)

    await forwarder.drain()
    await forwarder.drain()
    expect(sink.attempts.map((message) => JSON.parse(message.body).idempotency_key)).toEqual([
      'k1',
      'k2',
      'k3',
    ])
    const [first] = sink.confirmed
    expect(first!.id).toBe(await sinkMessageId(SENDER, 'k1'))
    const job = { ...event('k1'), seq: 1, fence: 'f', attempts: 0 }
    expect(JSON.parse(first!.body)).toEqual({
      ...forwardBody({
        ...job,
        operationId: 'op_1',
        taskId: 'task_1',
        taskType: 'create_media_buy',
        status: 'completed',
      }),
      received_at: '2026-04-18T14:00:00.000Z',
      payload: { idempotency_key: 'k1', status: 'completed' },
    })
    expect(first!.headers).toEqual({
      registration_id: 'reg_1',
      task_type: 'create_media_buy',
      status: 'completed',
    })
    expect(await forwarder.status()).toEqual({
      sink: 'test',
      pending: 0,
      oldestPendingSeconds: null,
      published: 3,
      lastError: null,
    })
  })

  it('retries a refused message with doubling back-off, its error visible in status()', async () => {
    const { db } = await openDb()
    await db.recordEvent(event('k1'))
    await db.recordEvent(event('k2'))
    const sink = new TestSink()
    const refusedId = await sinkMessageId(SENDER, 'k2')
    sink.refuse.set(refusedId, 'queue adcp-events is full')
    const clock = { now: T0 + 5 }
    const forwarder = relay(db, sink, clock)

    await forwarder.drain()
    expect(sink.confirmed.map((message) => message.id)).toEqual([await sinkMessageId(SENDER, 'k1')])
    expect(await forwarder.status()).toMatchObject({
      pending: 1,
      oldestPendingSeconds: 5,
      published: 1,
      lastError: { message: 'queue adcp-events is full', at: T0 + 5 },
    })

    clock.now = T0 + 14 // the first retry is due 10 s after the refusal
    await forwarder.drain()
    expect(sink.attempts).toHaveLength(2)
    clock.now = T0 + 15
    await forwarder.drain()
    expect(sink.attempts).toHaveLength(3) // refused again: the next one waits 20 s
    clock.now = T0 + 34
    await forwarder.drain()
    expect(sink.attempts).toHaveLength(3)

    sink.refuse.clear()
    clock.now = T0 + 35
    await forwarder.drain()
    expect(sink.confirmed.map((message) => message.id)).toEqual([
      await sinkMessageId(SENDER, 'k1'),
      refusedId,
    ])
    expect(await forwarder.status()).toMatchObject({ pending: 0, published: 2 })
  })

  it('keeps everything pending while the broker is down, then publishes each event once', async () => {
    const { db } = await openDb()
    await db.recordEvent(event('k1'))
    await db.recordEvent(event('k2'))
    const sink = new TestSink()
    sink.down = true
    const clock = { now: T0 + 1 }
    const forwarder = relay(db, sink, clock)

    await forwarder.drain()
    expect(await forwarder.status()).toMatchObject({
      pending: 2,
      published: 0,
      lastError: { message: 'test unavailable: connection refused', at: T0 + 1 },
    })
    expect(await db.pendingForwards()).toBe(2)

    sink.down = false
    clock.now = T0 + 2
    await forwarder.drain()
    expect(sink.attempts).toHaveLength(0) // not due yet: the back-off holds
    clock.now = T0 + 11
    await forwarder.drain()
    await forwarder.drain()
    expect(sink.confirmed.map((message) => JSON.parse(message.body).idempotency_key)).toEqual(['k1', 'k2'])
    expect(await forwarder.status()).toMatchObject({ pending: 0, published: 2 })
  })

  it('publishes again with the same id after a crash between the publish and the mark', async () => {
    const { db } = await openDb()
    await db.recordEvent(event('k1'))
    // The process dies right after the broker confirmed: the row is never marked, its lease stays.
    const crashing: ReceiverDatabase = {
      ...db,
      markForwarded: () => Promise.reject(new Error('process killed')),
      markForwardedMany: () => Promise.reject(new Error('process killed')),
    }
    const before = new TestSink()
    const clock = { now: T0 + 1 }
    const dead = relay(crashing, before, clock)
    await dead.drain()
    await dead.stop()
    expect(before.confirmed).toHaveLength(1)

    const after = new TestSink()
    const restarted = relay(db, after, clock)
    clock.now = T0 + 30
    await restarted.drain()
    expect(after.attempts).toHaveLength(0) // the dead relay's lease still holds
    clock.now = T0 + 62
    await restarted.drain()
    expect(after.confirmed).toHaveLength(1)
    expect(after.confirmed[0]!.id).toBe(before.confirmed[0]!.id)
    expect(after.confirmed[0]!.body).toBe(before.confirmed[0]!.body)
    expect(await restarted.status()).toMatchObject({ pending: 0, published: 1 })
  })
})

describe('/health and /api/relay', () => {
  it("show the relay's sink, lag and last error (its text to the admin only), and close the sink on close", async () => {
    const sink = new TestSink()
    sink.down = true
    const receiver = await startTestReceiver(
      {},
      { sink, forwarder: { intervalMs: 50, baseDelaySeconds: 60 } },
    )
    cleanup.push(() => receiver.close())
    const { deps } = receiver.runtime
    await deps.storage.db.recordEvent(event('k1', { receivedAt: Date.now() / 1000 - 3 }))
    deps.onWrite()
    await receiver.runtime.forwarder!.drain()
    const health = (await api(receiver, '/health', { token: null })).body
    expect(health.forwarding).toMatchObject({ sink: 'test', pending: 1, published: 0 })
    expect(health.forwarding.oldest_pending_s).toBeGreaterThanOrEqual(3)
    expect(Date.parse(health.forwarding.last_error_at)).toBeLessThanOrEqual(Date.now())
    // The error's text can name a private host: only the admin API shows it.
    expect(health.forwarding).not.toHaveProperty('last_error')
    expect(JSON.stringify(health)).not.toContain('connection refused')
    expect((await api(receiver, '/api/relay', { token: null })).status).toBe(401)
    const relay = await api(receiver, '/api/relay')
    expect(relay.status).toBe(200)
    expect(relay.body).toMatchObject({
      sink: 'test',
      pending: 1,
      published: 0,
      last_error: 'test unavailable: connection refused',
      last_error_at: health.forwarding.last_error_at,
    })
    await receiver.close()
    expect(sink.closed).toBe(true)
  })
})
