/** The sink's options and URL: defaults, the target redacted, refusals. */
import { describe, expect, it } from 'vitest'
import { createRabbitSink, RabbitSinkError, rabbitSinkFromUrl, rabbitSinkOptionsFromUrl } from './index.js'
import { resolveRabbitSinkOptions } from './options.js'

const invalidOptions = (error: unknown) => RabbitSinkError.is(error) && error.code === 'sink_invalid_options'

describe('the RabbitMQ sink options', () => {
  it('reads a sink URL: a queue, or an exchange and routing key; amqplib parameters stay in the broker URL', () => {
    expect(rabbitSinkOptionsFromUrl('amqp://guest:guest@127.0.0.1:5672/?queue=adcp.webhooks')).toEqual({
      url: 'amqp://guest:guest@127.0.0.1:5672/',
      queue: 'adcp.webhooks',
    })
    expect(
      rabbitSinkOptionsFromUrl('amqps://u:p@mq.example/prod?queue=q&queue_type=classic&heartbeat=30'),
    ).toEqual({
      url: 'amqps://u:p@mq.example/prod?heartbeat=30',
      queue: 'q',
      quorum: false,
    })
    expect(
      rabbitSinkOptionsFromUrl('amqp://mq.example?exchange=adcp&routing_key=webhooks.media_buy'),
    ).toEqual({
      url: 'amqp://mq.example',
      exchange: 'adcp',
      routingKey: 'webhooks.media_buy',
    })
  })

  it('applies the defaults (a quorum queue, 10 s for a confirm, 5 s to connect); the target has no password', () => {
    expect(
      resolveRabbitSinkOptions({ url: 'amqp://svc:secret@mq.example:5672/', queue: 'adcp.webhooks' }),
    ).toEqual({
      url: 'amqp://svc:secret@mq.example:5672/',
      exchange: '',
      routingKey: 'adcp.webhooks',
      queue: { name: 'adcp.webhooks', type: 'quorum' },
      confirmTimeoutMs: 10_000,
      connectTimeoutMs: 5000,
      target: 'amqp://***@mq.example:5672/?queue=adcp.webhooks&queue_type=quorum',
    })
    expect(
      resolveRabbitSinkOptions({ url: 'amqp://mq.example/', exchange: 'adcp', confirmTimeoutMs: 2000 }),
    ).toMatchObject({ exchange: 'adcp', routingKey: '', queue: undefined, confirmTimeoutMs: 2000 })
    const sink = rabbitSinkFromUrl('amqp://svc:secret@mq.example/?queue=q&queue_type=classic')
    expect(sink.kind).toBe('rabbitmq')
    expect(sink.target).toBe('amqp://***@mq.example/?queue=q&queue_type=classic')
    expect(sink.target).not.toContain('secret')
  })

  it.each([
    ['not a URL', 'nope'],
    ['another scheme', 'http://127.0.0.1:5672/?queue=q'],
    ['no queue nor exchange', 'amqp://127.0.0.1:5672/'],
    ['an unknown parameter', 'amqp://127.0.0.1/?queue=q&stream=s'],
    ['a bad queue type', 'amqp://127.0.0.1/?queue=q&queue_type=stream'],
    ['a queue type with an exchange', 'amqp://127.0.0.1/?exchange=e&queue_type=quorum'],
    ['a routing key with a queue', 'amqp://127.0.0.1/?queue=q&routing_key=k'],
    ['both a queue and an exchange', 'amqp://127.0.0.1/?queue=q&exchange=e'],
    ['an empty queue', 'amqp://127.0.0.1/?queue='],
  ])('refuses %s', (_, url) => {
    expect(() => rabbitSinkFromUrl(url)).toThrow(expect.toSatisfy(invalidOptions))
  })

  it('refuses bad options, never with the password in the message', () => {
    const url = 'amqp://svc:secret@mq.example/'
    for (const options of [
      { url },
      { url, queue: 'q', confirmTimeoutMs: 0 },
      { url, queue: 'q', connectTimeoutMs: 1.5 },
      { url, queue: 'x'.repeat(256) },
      { url, exchange: 'e', quorum: true },
      { url: 'amqp://svc:secret@mq.example/?queue=q', queue: 'q' },
      { url: 'amqp://svc:secret@[::1/', queue: 'q' },
    ]) {
      let thrown: unknown
      try {
        createRabbitSink(options)
      } catch (error) {
        thrown = error
      }
      expect(invalidOptions(thrown)).toBe(true)
      expect((thrown as Error).message).not.toContain('secret')
    }
  })
})
