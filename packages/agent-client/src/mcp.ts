/** The MCP side: the official `@modelcontextprotocol/sdk` client over streamable HTTP. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import type { AgentConnection, TransportOptions } from './connection.js'
import { withTimeout } from './limits.js'
import { failure, isRecord, mcpBody } from './result.js'

/**
 * Connects the official MCP client to the streamable HTTP endpoint `endpoint`.
 * @example const agent = await connectMcp('http://127.0.0.1:4200/mcp', { fetch, timeoutMs: 30_000, connectTimeoutMs: 5_000, clientInfo })
 */
export async function connectMcp(endpoint: string, options: TransportOptions): Promise<AgentConnection> {
  const client = new Client({ ...options.clientInfo }, { jsonSchemaValidator: sharedValidators })
  await withTimeout(
    options.connectTimeoutMs,
    `connecting to ${endpoint}`,
    (signal) =>
      client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { fetch: options.fetch }), {
        signal,
      }),
    options.signal,
  ).catch(async (error: unknown) => {
    await client.close().catch(() => {})
    throw error
  })
  return {
    protocol: 'mcp',
    get protocolVersion() {
      return client.transport instanceof StreamableHTTPClientTransport
        ? (client.transport.protocolVersion ?? '')
        : ''
    },
    async call(task, args, call = {}) {
      const timeoutMs = call.timeoutMs ?? options.timeoutMs
      try {
        const result = await withTimeout(
          timeoutMs,
          task,
          (signal) =>
            client.callTool({ name: task, arguments: args }, undefined, { signal, timeout: timeoutMs }),
          call.signal,
        )
        return {
          protocol: 'mcp',
          body: mcpBody(result as { structuredContent?: unknown; content?: unknown }),
          transportError: result.isError === true,
          raw: result,
        }
      } catch (error) {
        if (!(error instanceof McpError)) return failure('mcp', error)
        const data = isRecord(error.data) ? error.data : undefined
        return {
          protocol: 'mcp',
          body: data && isRecord(data.adcp_error) ? { adcp_error: data.adcp_error } : undefined,
          transportError: true,
          raw: { code: error.code, message: error.message, data: error.data },
        }
      }
    },
    async describe() {
      const server = client.getServerVersion()
      const instructions = client.getInstructions()
      const tools = await withTimeout(options.timeoutMs, 'listing tools', (signal) =>
        client.listTools(undefined, { signal }),
      )
      return {
        name: server?.title ?? server?.name ?? endpoint,
        ...(instructions ? { description: instructions } : {}),
        tasks: tools.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description ? { description: tool.description } : {}),
        })),
      }
    },
    close: () => client.close(),
  }
}

/**
 * The official client compiles every listed tool's `outputSchema` with Ajv on `listTools()`; an AdCP
 * seller's official schemas take seconds to compile. Callers connect anew often (a compliance runner for every
 * storyboard), so the compiled validators are kept for the process, keyed by the schema's JSON text.
 */
const compiled = new Map<string, ReturnType<AjvJsonSchemaValidator['getValidator']>>()
const ajvValidators = new AjvJsonSchemaValidator()
const sharedValidators: jsonSchemaValidator = {
  getValidator(schema) {
    const key = JSON.stringify(schema)
    let validator = compiled.get(key)
    if (!validator) {
      validator = ajvValidators.getValidator(schema)
      if (compiled.size >= 512) compiled.delete(compiled.keys().next().value!)
      compiled.set(key, validator)
    }
    return validator as never
  },
}
