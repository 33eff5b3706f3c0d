/**
 * Every JSON answer of the receiver ends with a newline: the routes and error handler behind service-kit's
 * listener, and the webhook deliveries answered on the node:http fast path (`deliveryIntercept`).
 */
import { jsonAnswer } from '@adwire/service-kit/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { ADMIN_TOKEN, envelope, startTestReceiver } from './testing/receiver.js'

let receiver: RunningReceiver
beforeAll(async () => {
  receiver = await startTestReceiver()
})
afterAll(() => receiver?.close())

describe('JSON answers', () => {
  it('end with a newline: health, the admin API, its errors and webhook deliveries', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
    expect(await jsonAnswer(receiver.url, '/health')).toBe(200)
    expect(await jsonAnswer(receiver.url, '/api/registrations', { headers: admin })).toBe(200)
    expect(await jsonAnswer(receiver.url, '/api/registrations')).toBe(401)
    expect(await jsonAnswer(receiver.url, '/api/registrations/nope', { headers: admin })).toBe(404)
    const delivery = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(envelope()),
    }
    expect(await jsonAnswer(receiver.url, '/webhooks/no-such-registration', delivery)).toBe(404)
  })
})
