/**
 * Every JSON answer of the agent ends with a newline, whichever part produced it: its own routes, the error
 * handler, the A2A server and the MCP transport (service-kit's listener adds it, once).
 */
import { jsonAnswer } from '@adwire/service-kit/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import { startTestAgent } from './test-support.js'

let agent: RunningCreativeAgent
beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent?.close())

describe('JSON answers', () => {
  it('end with a newline: routes, errors, the agent card, A2A and MCP', async () => {
    expect(await jsonAnswer(agent.url, '/health')).toBe(200)
    expect(await jsonAnswer(agent.url, '/.well-known/jwks.json')).toBe(200)
    expect(await jsonAnswer(agent.url, '/.well-known/agent-card.json')).toBe(200)
    expect(await jsonAnswer(agent.url, '/no-such-route')).toBe(404)
    const jsonRpc = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    expect(
      await jsonAnswer(agent.url, '/a2a', { method: 'POST', headers: jsonRpc, body: '{"jsonrpc":"2.0",' }),
    ).toBeLessThan(500)
    expect(
      await jsonAnswer(agent.url, '/mcp', {
        method: 'POST',
        headers: jsonRpc,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    ).toBeLessThan(500)
  })
})
