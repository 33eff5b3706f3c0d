/** The sink message id: stable, 43 base64url characters, distinct per sender and key. */
import { describe, expect, it } from 'vitest'
import { redactUrl, sinkMessageId } from './index.js'

describe('sinkMessageId', () => {
  it('is the same for the same sender and key, and differs when either differs', async () => {
    const id = await sinkMessageId('seller.example#k1', 'whk_1')
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/u)
    expect(await sinkMessageId('seller.example#k1', 'whk_1')).toBe(id)
    expect(await sinkMessageId('seller.example#k2', 'whk_1')).not.toBe(id)
    expect(await sinkMessageId('seller.example#k1', 'whk_2')).not.toBe(id)
    // The separator keeps the pair apart: "a\nbc" is not "ab\nc".
    expect(await sinkMessageId('a', 'bc')).not.toBe(await sinkMessageId('ab', 'c'))
  })

  it('redacts credentials from a broker URL', () => {
    expect(redactUrl('amqp://guest:guest@127.0.0.1:5672/')).toBe('amqp://***@127.0.0.1:5672/')
    expect(redactUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222')
    expect(redactUrl('not a url')).toBe('<invalid url>')
  })
})
