/** The Redis sink on the real Redis: the idempotent XADD, trimming, refusals, the connection. */
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import type { SinkMessage } from '@adwire/webhooks'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createRedisSink, RedisSinkError, redisSinkFromUrl } from './index.js'
import { CLIENT_NAME } from './redis-sink.js'

const url = await resolveTestBroker('redis')

describe.skipIf(!url)('the Redis streams sink', () => {
  const admin = createClient({ url: url! })
  const streams: string[] = []
  /** A stream of this test alone; it and its dedupe keys are deleted after the file. */
  const fresh = (label: string) => {
    const stream = `adwire:test:${label}:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
    streams.push(stream)
    return stream
  }
  const messages = (count: number, from = 0): SinkMessage[] =>
    Array.from({ length: count }, (_, offset) => {
      const index = from + offset
      return {
        id: `event-${String(index).padStart(3, '0')}`,
        body: JSON.stringify({ index }),
        headers: { 'adcp-sender': 'seller.example#k1', 'adcp-task-type': 'media_buy' },
      }
    })
  const allOk = (count: number) => Array.from({ length: count }, () => ({ ok: true }))

  beforeAll(async () => {
    await admin.connect()
  })
  afterAll(async () => {
    for (const stream of streams) {
      const keys = await admin.keys(`${stream}:dedupe:*`)
      await admin.del([stream, ...keys])
    }
    await admin.close()
  })

  it('appends 100 messages in order with id, body and headers; the same 100 again append nothing', async () => {
    const stream = fresh('hundred')
    const sink = createRedisSink({ url: url!, stream })
    expect(sink.kind).toBe('redis')
    const batch = messages(100)
    expect(await sink.publish(batch)).toEqual(allOk(100))
    const entries = (await admin.xRange(stream, '-', '+')) ?? []
    expect(entries.map((entry) => entry.message)).toEqual(
      batch.map((message) => ({
        id: message.id,
        body: message.body,
        headers: JSON.stringify(message.headers),
      })),
    )
    const ttl = await admin.ttl(`${stream}:dedupe:event-000`)
    expect(ttl).toBeGreaterThan(86_300)
    expect(ttl).toBeLessThanOrEqual(86_400)

    // A relay repeating the batch after a crash: every one confirmed, none appended twice.
    expect(await sink.publish(batch)).toEqual(allOk(100))
    expect(await admin.xLen(stream)).toBe(100)
    await sink.close()
  })

  it('appends each id once when two sinks publish the same 100 at once', async () => {
    const stream = fresh('race')
    const [one, two] = [createRedisSink({ url: url!, stream }), createRedisSink({ url: url!, stream })]
    const batch = messages(100)
    const [first, second] = await Promise.all([one.publish(batch), two.publish(batch)])
    expect(first).toEqual(allOk(100))
    expect(second).toEqual(allOk(100))
    const entries = (await admin.xRange(stream, '-', '+')) ?? []
    expect(entries).toHaveLength(100)
    expect(new Set(entries.map((entry) => entry.message.id)).size).toBe(100)
    await Promise.all([one.close(), two.close()])
  })

  it('feeds a consumer group (the README example): each event once, acked, deduplicated on the id field', async () => {
    const stream = fresh('consumer')
    const sink = redisSinkFromUrl(`${url!}?stream=${encodeURIComponent(stream)}`)
    const batch = messages(10)
    await sink.publish(batch)
    await sink.publish(batch.slice(0, 5)) // a relay's repeat: nothing appended
    await admin.xGroupCreate(stream, 'billing', '0', { MKSTREAM: true })
    const seen = new Set<string>()
    const handled: unknown[] = []
    // The README's loop: this consumer's own pending entries first ('0'), then new ones ('>'), until none come.
    let cursor = '0'
    for (;;) {
      const reply = (await admin.xReadGroup(
        'billing',
        'worker-1',
        { key: stream, id: cursor },
        { COUNT: 4, BLOCK: 100 },
      )) as { messages: { id: string; message: Record<string, string> }[] }[] | null
      const entries = reply?.[0]?.messages ?? []
      if (entries.length === 0 && cursor === '>') break
      if (cursor === '0' && entries.length === 0) cursor = '>'
      for (const { id: entryId, message } of entries) {
        if (!seen.has(message.id!)) {
          seen.add(message.id!)
          handled.push(JSON.parse(message.body!))
          expect(JSON.parse(message.headers!)).toEqual(batch[0]!.headers)
        }
        await admin.xAck(stream, 'billing', entryId)
      }
    }
    expect(handled).toEqual(batch.map((_, index) => ({ index })))
    const pending = await admin.xPending(stream, 'billing')
    expect(pending.pending).toBe(0)
    await sink.close()
  })

  it('trims the stream to about MAXLEN, and still drops repeats of trimmed events', async () => {
    const stream = fresh('maxlen')
    const sink = createRedisSink({ url: url!, stream, maxLen: 10 })
    for (let from = 0; from < 500; from += 100) {
      expect(await sink.publish(messages(100, from))).toEqual(allOk(100))
    }
    const length = await admin.xLen(stream)
    expect(length).toBeGreaterThanOrEqual(10)
    expect(length).toBeLessThan(200) // approximate: Redis trims whole nodes (100 entries by default)
    const [last] = (await admin.xRevRange(stream, '+', '-', { COUNT: 1 })) ?? []
    expect(last?.message.id).toBe('event-499')
    expect(await sink.publish(messages(10))).toEqual(allOk(10)) // trimmed long ago, still remembered
    expect(await admin.xLen(stream)).toBe(length)
    await sink.close()
  })

  it('remembers an id for dedupeSeconds; once its key expired the id is appended again', async () => {
    const stream = fresh('expiry')
    const sink = createRedisSink({ url: url!, stream, dedupeSeconds: 1 })
    expect(await sink.publish(messages(1))).toEqual(allOk(1))
    expect(await admin.ttl(`${stream}:dedupe:event-000`)).toBeLessThanOrEqual(1)
    await admin.del(`${stream}:dedupe:event-000`) // what the expiry does a second later
    expect(await sink.publish(messages(1))).toEqual(allOk(1))
    expect(await admin.xLen(stream)).toBe(2)
    await sink.close()
  })

  it('refuses each message the script fails on, and records no id for them', async () => {
    const stream = fresh('wrongtype')
    await admin.set(stream, 'not a stream')
    const sink = createRedisSink({ url: url!, stream })
    const outcomes = await sink.publish(messages(3))
    expect(outcomes).toHaveLength(3)
    for (const outcome of outcomes) {
      expect(outcome.ok).toBe(false)
      expect(!outcome.ok && outcome.error).toMatch(/Redis did not append the event: .*WRONGTYPE/u)
    }
    expect(await admin.keys(`${stream}:dedupe:*`)).toEqual([])
    // The key fixed, the relay's retry goes in.
    await admin.del(stream)
    expect(await sink.publish(messages(3))).toEqual(allOk(3))
    expect(await admin.xLen(stream)).toBe(3)
    await sink.close()
  })

  it('loads the script again when the server lost it (EVALSHA, then EVAL)', async () => {
    const stream = fresh('noscript')
    const sink = createRedisSink({ url: url!, stream })
    expect(await sink.publish(messages(2))).toEqual(allOk(2))
    await admin.scriptFlush()
    expect(await sink.publish(messages(4))).toEqual(allOk(4))
    expect(await admin.xLen(stream)).toBe(4)
    await sink.close()
  })

  it('rejects with a clear error when the server cannot be reached, and tries again on the next publish', async () => {
    const sink = createRedisSink({ url: 'redis://127.0.0.1:1/0', stream: 'adwire:never' })
    await expect(sink.publish(messages(1))).rejects.toSatisfy(
      (error) => RedisSinkError.is(error) && error.code === 'sink_unavailable',
    )
    await expect(sink.publish(messages(1))).rejects.toThrow(
      /cannot connect to Redis at redis:\/\/127\.0\.0\.1:1\/0\?stream=adwire%3Anever: .*ECONNREFUSED/u,
    )
    await sink.close()
  })

  it('reconnects after the server dropped its connection', async () => {
    const stream = fresh('reconnect')
    const sink = createRedisSink({ url: url!, stream })
    expect(await sink.publish(messages(1))).toEqual(allOk(1))
    const clients = String(await admin.sendCommand(['CLIENT', 'LIST']))
    const ids = [...clients.matchAll(/^id=(\d+) .*name=(\S*)/gmu)]
      .filter((match) => match[2] === CLIENT_NAME)
      .map((match) => match[1]!)
    expect(ids.length).toBeGreaterThan(0)
    for (const id of ids) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id])
    // Until the client has reconnected a publish rejects or refuses; then it goes in.
    await vi.waitFor(
      async () => {
        expect(await sink.publish(messages(2))).toEqual(allOk(2))
      },
      { timeout: 5000, interval: 100 },
    )
    expect(await admin.xLen(stream)).toBe(2)
    await sink.close()
  })

  it('closes idempotently, and refuses to publish once closed', async () => {
    const stream = fresh('close')
    const never = createRedisSink({ url: url!, stream })
    await never.close() // never opened
    const sink = createRedisSink({ url: url!, stream })
    expect(await sink.publish(messages(1))).toEqual(allOk(1))
    await Promise.all([sink.close(), sink.close()])
    await sink.close()
    await expect(sink.publish(messages(1))).rejects.toSatisfy(
      (error) => RedisSinkError.is(error) && error.code === 'sink_closed',
    )
    expect(await sink.publish([]).catch((error: unknown) => RedisSinkError.is(error))).toBe(true)
  })
})
