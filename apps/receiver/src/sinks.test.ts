/** SINK_URL to a sink: HTTP built in, brokers loaded from their packages, a clear EnvError otherwise. */
import type { Sink } from '@adwire/webhooks'
import { describe, expect, it } from 'vitest'
import { EnvError, parseEnv } from './env.js'
import { sinkFromUrl } from './sinks.js'

describe('sinkFromUrl', () => {
  it('opens the HTTP sink for http(s) URLs, credentials redacted from its target', async () => {
    const sink = await sinkFromUrl('https://user:secret@events.buyer.example/adcp', {
      fetch: globalThis.fetch,
    })
    expect(sink.kind).toBe('http')
    expect(sink.target).toBe('https://***@events.buyer.example/adcp')
    await sink.close()
  })

  it('refuses an unknown scheme with an EnvError naming the accepted ones', async () => {
    const opening = sinkFromUrl('kafka://127.0.0.1:9092?topic=adcp')
    await expect(opening).rejects.toThrow(EnvError)
    await expect(opening).rejects.toThrow(
      /SINK_URL must be an absolute URL with one of the schemes amqp, amqps/,
    )
    await expect(sinkFromUrl('not a url')).rejects.toThrow(EnvError)
  })

  it("names the broker's package when it is not installed", async () => {
    const missing = (specifier: string) => Promise.reject(new Error(`Cannot find package '${specifier}'`))
    const opening = sinkFromUrl('nats://127.0.0.1:4222?stream=ADCP&subject=adcp.events', { load: missing })
    await expect(opening).rejects.toThrow(EnvError)
    await expect(opening).rejects.toThrow(/needs the package @adwire\/sink-nats/)
    await expect(
      sinkFromUrl('amqp://127.0.0.1:5672/?queue=adcp', { load: () => Promise.resolve({}) }),
    ).rejects.toThrow(/@adwire\/sink-rabbitmq does not export rabbitSinkFromUrl/)
  })

  it("calls the broker package's factory with the URL", async () => {
    const sink: Sink = {
      kind: 'redis',
      target: 'redis://127.0.0.1:6379',
      publish: async () => [],
      close: async () => {},
    }
    const seen: string[] = []
    const load = async (specifier: string) => ({
      redisSinkFromUrl: (url: string) => {
        seen.push(`${specifier} ${url}`)
        return sink
      },
    })
    expect(await sinkFromUrl('redis://127.0.0.1:6379?stream=adcp', { load })).toBe(sink)
    expect(seen).toEqual(['@adwire/sink-redis redis://127.0.0.1:6379?stream=adcp'])
  })
})

describe('SINK_URL', () => {
  it('is read beside DOWNSTREAM_URL, never with it, and only with a known scheme', () => {
    const url = 'nats://127.0.0.1:4222?stream=ADCP&subject=adcp.events'
    expect(parseEnv({ SINK_URL: url }).sinkUrl).toBe(url)
    expect(parseEnv({ SINK_URL: '' })).not.toHaveProperty('sinkUrl')
    expect(() => parseEnv({ SINK_URL: url, DOWNSTREAM_URL: 'http://127.0.0.1:9000/events' })).toThrow(
      /SINK_URL: set SINK_URL or DOWNSTREAM_URL \(its HTTP alias\), not both/,
    )
    expect(() => parseEnv({ SINK_URL: 'kafka://127.0.0.1:9092' })).toThrow(/SINK_URL must be an absolute URL/)
  })
})
