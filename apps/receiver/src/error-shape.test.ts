/**
 * The receiver answers every error in its one documented shape, `{ "error": { code, message, details? } }`:
 * the admin API, the webhook core's rejections, unknown routes and unexpected failures alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from './app.js'
import type { RunningReceiver } from './service.js'
import { ADMIN_TOKEN, startTestReceiver } from './testing/receiver.js'

let receiver: RunningReceiver
beforeAll(async () => {
  receiver = await startTestReceiver()
})
afterAll(() => receiver?.close())

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

async function errorOf(response: Response, status: number) {
  expect(response.status).toBe(status)
  const body = (await response.json()) as { error: { code: unknown; message: unknown } }
  expect(Object.keys(body)).toEqual(['error'])
  expect(typeof body.error.code).toBe('string')
  expect(typeof body.error.message).toBe('string')
  return body.error
}

describe('the receiver error shape', () => {
  it('is the same for the admin API, the webhook core, unknown routes and failures', async () => {
    const app = createApp(receiver.runtime.deps)
    expect(await errorOf(await app.request('/api/registrations'), 401)).toMatchObject({
      code: 'unauthorized',
    })
    const bad = await app.request('/api/registrations', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"auth":{"mode":"nope"}}',
    })
    expect(await errorOf(bad, 400)).toHaveProperty('details')
    expect(
      (await errorOf(await app.request('/webhooks/wr_unknown', { method: 'POST', body: '{}' }), 404)).code,
    ).toMatch(/^[a-z_]+$/)
    expect(await errorOf(await app.request('/nope'), 404)).toMatchObject({ code: 'not_found' })

    const { deps } = receiver.runtime
    const failing = createApp({
      ...deps,
      log: () => {},
      storage: {
        ...deps.storage,
        db: { ...deps.storage.db, listRegistrations: () => Promise.reject(new Error('secret detail')) },
      },
    })
    const failed = await errorOf(await failing.request('/api/registrations', { headers: admin }), 500)
    expect(failed).toMatchObject({ code: 'internal_error' })
    expect(JSON.stringify(failed)).not.toContain('secret')
  })
})
