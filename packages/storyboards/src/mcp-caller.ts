/** The MCP side of the runner's transport: the official `@modelcontextprotocol/sdk` client over streamable HTTP. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { createRunnerFetch } from './http.js'
import { failure, isRecord, withTimeout, type CallerOptions, type TaskCaller } from './transport.js'

function mcpBody(result: {
  structuredContent?: unknown
  content?: unknown
}): Record<string, unknown> | undefined {
  if (isRecord(result.structuredContent)) return result.structuredContent
  const first = Array.isArray(result.content)
    ? (result.content[0] as { type?: string; text?: string })
    : undefined
  if (first?.type === 'text' && typeof first.text === 'string') {
    try {
      const parsed: unknown = JSON.parse(first.text)
      if (isRecord(parsed)) return parsed
    } catch {
      // a non-JSON text result has no AdCP body
    }
  }
  return undefined
}

/**
 * Connects the official MCP client to `${agentUrl}/mcp`.
 * @example const caller = await mcpCaller('http://127.0.0.1:4200', { maxResponseBytes: 1 << 22, connectTimeoutMs: 5000 })
 */
export async function mcpCaller(agentUrl: string, options: CallerOptions): Promise<TaskCaller> {
  const http = createRunnerFetch({
    ...options,
    agentUrl,
    credentials: options.credentials ?? { type: 'none' },
  })
  const client = new Client(
    { name: 'adwire-storyboards', version: '0.1.0' },
    { jsonSchemaValidator: sharedValidators },
  )
  await withTimeout(options.connectTimeoutMs, `connecting to ${agentUrl}/mcp`, () =>
    client.connect(new StreamableHTTPClientTransport(new URL(`${agentUrl}/mcp`), { fetch: http.fetch })),
  )
  return {
    protocol: 'mcp',
    async call(task, args, timeoutMs) {
      http.reset()
      try {
        const result = await withTimeout(timeoutMs, task, (signal) =>
          client.callTool({ name: task, arguments: args }, undefined, { signal, timeout: timeoutMs }),
        )
        const observed = http.last()
        return {
          transport: 'mcp',
          body: mcpBody(result as { structuredContent?: unknown; content?: unknown }),
          transportError: result.isError === true,
          ...(observed ? { http: observed } : {}),
          raw: result,
        }
      } catch (error) {
        const observed = http.last()
        if (!(error instanceof McpError)) return failure('mcp', error, observed)
        const data = isRecord(error.data) ? error.data : undefined
        return {
          transport: 'mcp',
          body: data && isRecord(data.adcp_error) ? { adcp_error: data.adcp_error } : undefined,
          transportError: true,
          ...(observed ? { http: observed } : {}),
          raw: { code: error.code, message: error.message, data: error.data },
        }
      }
    },
    async tasks() {
      return (await client.listTools()).tools.map((tool) => tool.name)
    },
    close: () => client.close(),
  }
}

/**
 * The official client compiles every listed tool's `outputSchema` with Ajv on `listTools()`; an AdCP
 * seller's official schemas take seconds to compile. The runner connects anew for every storyboard, so the
 * compiled validators are kept for the process, keyed by the schema's JSON text.
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
