/** The Redis sink's options and sink URLs, without a server. */
import { describe, expect, it } from 'vitest'
import { createRedisSink, RedisSinkError, redisSinkFromUrl, redisSinkOptionsFromUrl } from './index.js'
import { resolveRedisSinkOptions } from './options.js'

const invalidOptions = (error: unknown) => RedisSinkError.is(error) && error.code === 'sink_invalid_options'

describe('the Redis sink options', () => {
  it('reads a sink URL', () => {
    expect(
      redisSinkOptionsFromUrl(
        'redis://127.0.0.1:6379/0?stream=adcp:webhooks&maxlen=1000000&dedupe_seconds=86400',
      ),
    ).toEqual({
      url: 'redis://127.0.0.1:6379/0',
      stream: 'adcp:webhooks',
      maxLen: 1_000_000,
      dedupeSeconds: 86_400,
    })
    expect(redisSinkOptionsFromUrl('rediss://u:p@redis.example:6380?stream=S')).toEqual({
      url: 'rediss://u:p@redis.example:6380',
      stream: 'S',
    })
  })

  it('applies the defaults, keeps the query out of the client URL and redacts the target', () => {
    const resolved = resolveRedisSinkOptions({
      url: 'redis://svc:secret@redis.example:6379/2',
      stream: 'adcp:webhooks',
    })
    expect(resolved).toEqual({
      url: 'redis://svc:secret@redis.example:6379/2',
      stream: 'adcp:webhooks',
      maxLen: 0,
      dedupeSeconds: 86_400,
      connectTimeoutMs: 5000,
      target: 'redis://***@redis.example:6379/2?stream=adcp%3Awebhooks',
    })
    const sink = redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=S&maxlen=10')
    expect(sink.kind).toBe('redis')
    expect(sink.target).toBe('redis://127.0.0.1:6379/0?stream=S&maxlen=10')
  })

  it('refuses what it cannot use with sink_invalid_options', () => {
    const refused = [
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0?stream='),
      () => redisSinkFromUrl('amqp://127.0.0.1:5672?stream=S'),
      () => redisSinkFromUrl('not a url'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/zero?stream=S'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=S&maxlen=lots'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=S&maxlen=0'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=S&dedupe_seconds=-1'),
      () => redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=S&dedupe=60'),
      () => createRedisSink({ url: 'redis://h:6379', stream: '' }),
      () => createRedisSink({ url: 'redis://h:6379', stream: 'S', maxLen: 1.5 }),
      () => createRedisSink({ url: 'redis://h:6379', stream: 'S', dedupeSeconds: 0 }),
      () => createRedisSink({ url: 'redis://h:6379', stream: 'S', connectTimeoutMs: Number.NaN }),
    ]
    for (const attempt of refused) expect(attempt).toThrowError(expect.toSatisfy(invalidOptions))
  })

  it('never puts a password in an error message', () => {
    for (const url of [
      'redis://svc:secret@127.0.0.1:6379/0',
      'redis://svc:secret@127.0.0.1:6379/x?stream=S',
    ]) {
      try {
        redisSinkFromUrl(url)
        expect.unreachable()
      } catch (error) {
        expect(invalidOptions(error)).toBe(true)
        expect(String(error)).not.toContain('secret')
      }
    }
  })
})
