/**
 * Every HTTP answer of the creative agent that is not a task result is one body shape: the AdCP error object in
 * its envelope position (`{ adcp_error }`), checked against the generated core/error.json schema.
 */
import { AdcpErrorSchema } from '@adwire/schemas'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from './app.js'
import type { RunningCreativeAgent } from './service.js'
import { startTestAgent } from './test-support.js'

let agent: RunningCreativeAgent
beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent?.close())

async function adcpError(response: Response, status: number) {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as { adcp_error: unknown }
  expect(Object.keys(body)).toEqual(['adcp_error'])
  return AdcpErrorSchema.parse(body.adcp_error)
}

describe('error answers outside tasks', () => {
  it('unknown routes, previews and audio: 404 REFERENCE_NOT_FOUND', async () => {
    const app = createApp(agent.runtime.deps)
    for (const path of ['/nope', `/previews/pv_${'0'.repeat(32)}`, '/generated/audio/not-a-name.wav']) {
      const error = await adcpError(await app.request(path), 404)
      expect(error, path).toMatchObject({ code: 'REFERENCE_NOT_FOUND', recovery: 'correctable' })
    }
  })

  it('an unexpected failure: 500 INTERNAL_ERROR, terminal, without the failure text', async () => {
    const logged: Record<string, unknown>[] = []
    const app = createApp({
      ...agent.runtime.deps,
      log: (entry) => logged.push(entry),
      agent: {
        ...agent.runtime.deps.agent,
        fetch: () => Promise.reject(new Error('secret detail')),
      },
    })
    const error = await adcpError(await app.request('/mcp', { method: 'POST', body: '{}' }), 500)
    expect(error).toMatchObject({ code: 'INTERNAL_ERROR', recovery: 'terminal' })
    expect(JSON.stringify(error)).not.toContain('secret')
    expect(logged).toContainEqual(expect.objectContaining({ error: 'unhandled', message: 'secret detail' }))
  })
})
