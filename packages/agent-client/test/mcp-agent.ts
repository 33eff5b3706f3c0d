/**
 * A tiny MCP agent for the client's tests: the official MCP server SDK (stateless streamable HTTP) on
 * 127.0.0.1, serving exactly `POST /mcp` (anything else is a 404, as a real agent answers `/mcp/mcp`).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

export interface McpAgent {
  readonly origin: string
  /** The paths of every request, in order. */
  readonly paths: string[]
  close(): Promise<void>
}

/** Starts the agent: `get_adcp_capabilities` answers `capabilities`, `fail` answers an AdCP error. */
export async function startMcpAgent(capabilities: Record<string, unknown>, huge = 0): Promise<McpAgent> {
  const paths: string[] = []
  const http = createServer((request, response) => {
    void (async () => {
      paths.push(request.url ?? '')
      if (request.url !== '/mcp') {
        response.writeHead(404).end()
        return
      }
      const server = new Server({ name: 'tiny-agent', version: '0.0.0' }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: ['get_adcp_capabilities', 'fail'].map((name) => ({
          name,
          inputSchema: { type: 'object' as const },
        })),
      }))
      server.setRequestHandler(CallToolRequestSchema, (call) => {
        const body =
          call.params.name === 'fail'
            ? { adcp_error: { code: 'RATE_LIMITED', message: 'slow down' } }
            : { ...capabilities, ...(huge ? { padding: 'x'.repeat(huge) } : {}) }
        return {
          structuredContent: body,
          content: [{ type: 'text' as const, text: JSON.stringify(body) }],
          ...(call.params.name === 'fail' ? { isError: true } : {}),
        }
      })
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      })
      await server.connect(transport)
      await transport.handleRequest(request, response)
    })().catch(() => response.writeHead(500).end())
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    paths,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  }
}
