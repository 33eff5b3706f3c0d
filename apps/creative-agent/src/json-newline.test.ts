/**
 * Every JSON answer of the agent ends with a newline, whichever part produced it: its own routes, the error
 * handler, the A2A server and the MCP transport (service-kit's listener adds it, once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import { startTestAgent } from './test-support.js'

let agent: RunningCreativeAgent
beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent?.close())

/** The answer's status; its body is JSON that ends with exactly one newline. */
async function jsonAnswer(path: string, init?: RequestInit): Promise<number> {
  const response = await fetch(`${agent.url}${path}`, init)
  expect(response.headers.get('content-type'), path).toMatch(/^application\/(.+\+)?json/)
  const text = await response.text()
  expect(text.endsWith('\n') && !text.endsWith('\n\n'), `${path}: …${text.slice(-40)}`).toBe(true)
  expect(() => JSON.parse(text), path).not.toThrow()
  return response.status
}

describe('JSON answers', () => {
  it('end with a newline: routes, errors, the agent card, A2A and MCP', async () => {
    expect(await jsonAnswer('/health')).toBe(200)
    expect(await jsonAnswer('/.well-known/jwks.json')).toBe(200)
    expect(await jsonAnswer('/.well-known/agent-card.json')).toBe(200)
    expect(await jsonAnswer('/no-such-route')).toBe(404)
    const jsonRpc = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    expect(
      await jsonAnswer('/a2a', { method: 'POST', headers: jsonRpc, body: '{"jsonrpc":"2.0",' }),
    ).toBeLessThan(500)
    expect(
      await jsonAnswer('/mcp', {
        method: 'POST',
        headers: jsonRpc,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    ).toBeLessThan(500)
  })
})
