/** The sink's options and URL: defaults, credentials out of the servers, the target redacted, refusals. */
import { describe, expect, it } from 'vitest'
import { createNatsSink, NatsSinkError, natsSinkFromUrl, natsSinkOptionsFromUrl } from './index.js'
import { resolveNatsSinkOptions } from './options.js'

const invalidOptions = (error: unknown) => NatsSinkError.is(error) && error.code === 'sink_invalid_options'

describe('the NATS sink options', () => {
  it('reads a sink URL', () => {
    expect(
      natsSinkOptionsFromUrl('nats://127.0.0.1:4222?stream=ADCP_WEBHOOKS&subject=adcp.webhooks'),
    ).toEqual({
      servers: 'nats://127.0.0.1:4222',
      stream: 'ADCP_WEBHOOKS',
      subject: 'adcp.webhooks',
    })
    expect(
      natsSinkOptionsFromUrl(
        'tls://u:p@nats.example:4443?stream=S&subject=a.b&duplicate_window=86400&create_stream=false',
      ),
    ).toEqual({
      servers: 'tls://u:p@nats.example:4443',
      stream: 'S',
      subject: 'a.b',
      duplicateWindowSeconds: 86400,
      createStream: false,
    })
  })

  it('applies the defaults and takes credentials out of the server URLs, the target redacted', () => {
    const resolved = resolveNatsSinkOptions({
      servers: 'nats://svc:secret@nats.example:4222',
      stream: 'S',
      subject: 'a.b',
    })
    expect(resolved).toMatchObject({
      servers: ['nats://nats.example:4222'],
      user: 'svc',
      pass: 'secret',
      duplicateWindowSeconds: undefined,
      createStream: true,
      concurrency: 64,
      ackTimeoutMs: 5000,
      maxReconnectAttempts: 10,
    })
    expect(resolved.target).toBe('nats://***@nats.example:4222?stream=S&subject=a.b')
    expect(resolved.target).not.toContain('secret')
    const token = resolveNatsSinkOptions({ servers: ['tok@a:4222', 'b:4222'], stream: 'S', subject: 'a' })
    expect(token.servers).toEqual(['nats://a:4222', 'nats://b:4222'])
    expect(token.token).toBe('tok')
    expect(natsSinkFromUrl('nats://127.0.0.1:4222?stream=S&subject=a.b').target).toBe(
      'nats://127.0.0.1:4222?stream=S&subject=a.b',
    )
  })

  it('refuses what it cannot use with sink_invalid_options', () => {
    const refused = [
      () => natsSinkFromUrl('nats://127.0.0.1:4222'),
      () => natsSinkFromUrl('nats://127.0.0.1:4222?stream=S'),
      () => natsSinkFromUrl('amqp://127.0.0.1:5672?stream=S&subject=a'),
      () => natsSinkFromUrl('not a url'),
      () => natsSinkFromUrl('nats://127.0.0.1:4222?stream=S&subject=a&duplicate_window=soon'),
      () => natsSinkFromUrl('nats://127.0.0.1:4222?stream=S&subject=a&create_stream=maybe'),
      () => natsSinkFromUrl('nats://127.0.0.1:4222?stream=S&subject=a&window=60'),
      () => createNatsSink({ servers: [], stream: 'S', subject: 'a' }),
      () => createNatsSink({ servers: 'nats://h:4222', stream: 'A.B', subject: 'a' }),
      () => createNatsSink({ servers: 'nats://h:4222', stream: 'S', subject: 'a.*' }),
      () => createNatsSink({ servers: 'nats://h:4222', stream: 'S', subject: 'a..b' }),
      () =>
        createNatsSink({ servers: 'nats://h:4222', stream: 'S', subject: 'a', duplicateWindowSeconds: 0 }),
      () => createNatsSink({ servers: 'nats://h:4222', stream: 'S', subject: 'a', concurrency: 1.5 }),
      () => createNatsSink({ servers: 'nats://h:4222', stream: 'S', subject: 'a', maxReconnectAttempts: -2 }),
    ]
    for (const attempt of refused) expect(attempt).toThrowError(expect.toSatisfy(invalidOptions))
  })

  it('never puts a password in an error message', () => {
    try {
      natsSinkFromUrl('nats://svc:secret@127.0.0.1:4222?stream=S')
      expect.unreachable()
    } catch (error) {
      expect(invalidOptions(error)).toBe(true)
      expect(String(error)).not.toContain('secret')
    }
  })
})
