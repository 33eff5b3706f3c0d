/**
 * Every JSON answer of the receiver ends with a newline: the routes and error handler behind service-kit's
 * listener, and the webhook deliveries answered on the node:http fast path (`deliveryIntercept`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { ADMIN_TOKEN, envelope, startTestReceiver } from './testing/receiver.js'

let receiver: RunningReceiver
beforeAll(async () => {
  receiver = await startTestReceiver()
})
afterAll(() => receiver?.close())

/** The answer's status; its body is JSON that ends with exactly one newline. */
async function jsonAnswer(path: string, init?: RequestInit): Promise<number> {
  const response = await fetch(`${receiver.url}${path}`, init)
  expect(response.headers.get('content-type'), path).toMatch(/^application\/(.+\+)?json/)
  const text = await response.text()
  expect(text.endsWith('\n') && !text.endsWith('\n\n'), `${path}: …${text.slice(-40)}`).toBe(true)
  expect(() => JSON.parse(text), path).not.toThrow()
  return response.status
}

describe('JSON answers', () => {
  it('end with a newline: health, the admin API, its errors and webhook deliveries', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
    expect(await jsonAnswer('/health')).toBe(200)
    expect(await jsonAnswer('/api/registrations', { headers: admin })).toBe(200)
    expect(await jsonAnswer('/api/registrations')).toBe(401)
    expect(await jsonAnswer('/api/registrations/nope', { headers: admin })).toBe(404)
    const delivery = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(envelope()),
    }
    expect(await jsonAnswer('/webhooks/no-such-registration', delivery)).toBe(404)
  })
})
