/**
 * `/mcp` serves POST only (stateless streamable HTTP): GET, which a client uses to open a server-initiated
 * stream, and DELETE, which ends a session, are 405 with `Allow: POST` over raw HTTP on 127.0.0.1, never a 200
 * with an empty body; the official MCP client still connects, lists the tools and calls one, many times over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpClient, startTestAgent, BUYER_TOKEN } from './test-support.js'

let agent: Awaited<ReturnType<typeof startTestAgent>>

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

describe('GET /mcp', () => {
  it('is 405 with Allow: POST, whatever the Accept header and credentials', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { accept: 'text/event-stream' },
      { accept: 'application/json, text/event-stream', authorization: `Bearer ${BUYER_TOKEN}` },
    ]) {
      const response = await fetch(`${agent.url}/mcp`, { headers })
      expect([response.status, response.headers.get('allow')]).toEqual([405, 'POST'])
      expect(await response.text()).toBe('')
    }
    const deleted = await fetch(`${agent.url}/mcp`, { method: 'DELETE' })
    expect([deleted.status, deleted.headers.get('allow')]).toEqual([405, 'POST'])
  })

  // 20 rounds here (each client compiles every tool's output schema on listTools); 50 in agent-server.
  it(
    'leaves the official client working: connect, listTools, callTool, 20 times',
    { timeout: 120_000 },
    async () => {
      for (let round = 0; round < 20; round += 1) {
        const client = await mcpClient(agent, BUYER_TOKEN)
        try {
          const { tools } = await client.listTools()
          expect(tools.map((tool) => tool.name)).toContain('get_adcp_capabilities')
          const result = await client.callTool({
            name: 'get_adcp_capabilities',
            arguments: { adcp_major_version: 3, context: { correlation_id: `round-${round}` } },
          })
          expect(result.isError).toBeFalsy()
          expect((result.structuredContent as { context?: unknown }).context).toEqual({
            correlation_id: `round-${round}`,
          })
        } finally {
          await client.close()
        }
      }
    },
  )
})
