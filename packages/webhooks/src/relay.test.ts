/**
 * The relay over an in-memory queue, and the HTTP sink over an injected fetch: the message of an event, a
 * batch per publish, a short answer from the sink counted as refusals, a lost lease logged, the
 * Idempotency-Key and the 2xx rule, a batch's requests at once over a real HTTP server. (The receiver's tests run the relay over its SQLite event rows.)
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import {
  createRelay,
  httpSink,
  relayMessage,
  sinkMessageId,
  type RelayEvent,
  type RelaySource,
  type Sink,
  type SinkMessage,
} from './index.js'

const event = (seq: number, extra: Partial<RelayEvent> = {}): RelayEvent => ({
  seq,
  fence: `fence-${seq}`,
  attempts: 0,
  registrationId: 'rg_1',
  sender: 'seller.example#key-1',
  idempotencyKey: `whk_${seq}`,
  operationId: null,
  taskId: 'task_1',
  taskType: null,
  status: 'working',
  terminal: false,
  receivedAt: 1_776_520_800,
  payload: '{"status":"working"}',
  ...extra,
})

/** A queue in memory: `lost` names the seqs whose lease was lost. */
function memoryQueue(events: RelayEvent[], lost = new Set<number>()) {
  const pending = new Map(events.map((item) => [item.seq, item]))
  const retries: { seq: number; at: number; error: string }[] = []
  const source: RelaySource = {
    lease: async () => [...pending.values()],
    markPublished: async (seq) => !lost.has(seq) && pending.delete(seq),
    retry: async (seq, _fence, at, error) => {
      retries.push({ seq, at, error })
      pending.delete(seq) // not due again in these tests
      return true
    },
    release: async () => {},
    backlog: async () => ({ count: pending.size }),
  }
  return { source, retries }
}

describe('relayMessage', () => {
  it('carries the stable id, the JSON body and only the routing headers present', async () => {
    const message = await relayMessage(event(1))
    expect(message.id).toBe(await sinkMessageId('seller.example#key-1', 'whk_1'))
    expect(message.headers).toEqual({ registration_id: 'rg_1', status: 'working' })
    expect(JSON.parse(message.body)).toEqual({
      registration_id: 'rg_1',
      sender: 'seller.example#key-1',
      idempotency_key: 'whk_1',
      operation_id: null,
      task_id: 'task_1',
      task_type: null,
      status: 'working',
      terminal: false,
      received_at: '2026-04-18T14:00:00.000Z',
      payload: { status: 'working' },
    })
  })
})

describe('createRelay', () => {
  it('publishes a batch at once, retries what has no outcome, and logs a lost lease', async () => {
    const batches: (readonly SinkMessage[])[] = []
    const sink: Sink = {
      kind: 'short',
      target: 'test://',
      publish: async (messages) => {
        batches.push(messages)
        return [{ ok: true }, { ok: true }] // one outcome short
      },
      close: async () => {},
    }
    const { source, retries } = memoryQueue([event(1), event(2), event(3)], new Set([2]))
    const log: Record<string, unknown>[] = []
    const relay = createRelay({
      source,
      sink,
      now: () => 100,
      random: () => 0,
      log: (entry) => log.push(entry),
    })
    await relay.drain()
    expect(batches.map((batch) => batch.length)).toEqual([3])
    expect(retries).toEqual([{ seq: 3, at: 101, error: 'short: no outcome' }])
    expect(log).toContainEqual({ relay: 'lease_lost', sink: 'short', seq: 2 })
    expect(await relay.status()).toEqual({
      sink: 'short',
      pending: 1,
      oldestPendingSeconds: null,
      published: 1,
      lastError: { message: 'short: no outcome', at: 100 },
    })
  })
})

describe('createRelay with a source that marks a batch at once', () => {
  it('marks the confirmed events of a batch in one call, and counts only the leases still held', async () => {
    const { source } = memoryQueue([event(1), event(2), event(3), event(4)])
    const calls: number[][] = []
    const batched: RelaySource = {
      ...source,
      markPublished: () => Promise.reject(new Error('one by one is not used')),
      markPublishedMany: async (events) => {
        calls.push(events.map((item) => item.seq))
        return events.map((item) => item.seq !== 2)
      },
    }
    const sink: Sink = {
      kind: 'test',
      target: 'test://',
      publish: async (messages) =>
        messages.map((_, index) => (index === 2 ? { ok: false, error: 'nack' } : { ok: true })),
      close: async () => {},
    }
    const log: Record<string, unknown>[] = []
    const relay = createRelay({ source: batched, sink, now: () => 100, log: (entry) => log.push(entry) })
    await relay.drain()
    expect(calls).toEqual([[1, 2, 4]]) // event 3 was refused: retried, not marked
    expect(log).toContainEqual({ relay: 'lease_lost', sink: 'test', seq: 2 })
    expect((await relay.status()).published).toBe(2)
  })
})

describe('httpSink', () => {
  it('posts each message with its Idempotency-Key and takes a 2xx only', async () => {
    const requests: { url: string; init: RequestInit }[] = []
    const answers = [204, 503]
    const sink = httpSink('https://user:pw@events.buyer.example/adcp', {
      fetch: async (url, init) => {
        requests.push({ url: String(url), init: init! })
        return new Response(null, { status: answers.shift() })
      },
    })
    expect(sink.target).toBe('https://***@events.buyer.example/adcp')
    const messages = [await relayMessage(event(1)), { id: 'raw-id', body: 'not json', headers: {} }]
    expect(await sink.publish(messages)).toEqual([
      { ok: true },
      { ok: false, error: 'downstream answered 503' },
    ])
    expect(requests.map((request) => new Headers(request.init.headers).get('idempotency-key'))).toEqual([
      'rg_1:whk_1',
      'raw-id',
    ])
    expect(requests[0]!.init.body).toBe(messages[0]!.body)
  })

  it.each([
    [undefined, 5],
    [1, 1],
    [2, 2],
  ])(
    'posts a batch with concurrency %s: at most %i requests at once, each outcome in its place',
    async (concurrency, most) => {
      let open = 0
      let peak = 0
      // Answers are held until `most` requests are open at once (or 2 s pass, when fewer ever are), so the
      // peak seen is the sink's concurrency whatever the machine's speed.
      let held: (() => void)[] = []
      const releaseAll = () => {
        const now = held
        held = []
        for (const answer of now) answer()
      }
      const server = createServer((request, response) => {
        open += 1
        peak = Math.max(peak, open)
        request.resume()
        request.on('end', () => {
          const timer = setTimeout(releaseAll, 2000)
          held.push(() => {
            clearTimeout(timer)
            open -= 1
            response.statusCode = request.headers['idempotency-key'] === 'rg_1:whk_3' ? 500 : 200
            response.end()
          })
          if (held.length >= most) releaseAll()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const { port } = server.address() as AddressInfo
        const sink = httpSink(`http://127.0.0.1:${port}/events`, concurrency ? { concurrency } : {})
        const messages = await Promise.all([1, 2, 3, 4, 5].map((seq) => relayMessage(event(seq))))
        const outcomes = await sink.publish(messages)
        expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, false, true, true])
        expect(peak).toBe(most)
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    },
  )

  it('refuses a concurrency below 1', () => {
    expect(() => httpSink('http://127.0.0.1:9/', { concurrency: 0 })).toThrow(/concurrency/)
  })

  it('turns a network failure into a refusal, never a rejection', async () => {
    const sink = httpSink('http://127.0.0.1:9/', {
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    })
    expect(await sink.publish([await relayMessage(event(1))])).toEqual([
      { ok: false, error: 'downstream unreachable: fetch failed' },
    ])
  })
})
