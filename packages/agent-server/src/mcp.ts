import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { rawContext, type TaskCall, type TaskOutcome } from './core.js'
import { AgentError, failedTaskBody } from './errors.js'
import { toolAnnotations, toolInputSchema, toolOutputSchema } from './tool-schemas.js'
import type { AnyTask, VerifiedSigner } from './types.js'

/**
 * Renders an outcome as an MCP tool result (AdCP mcp-guide: structuredContent and JSON text). A failure is
 * `isError: true` with the {@link failedTaskBody} (`status: 'failed'`, `errors[]`, `adcp_error`, `context`).
 */
export function toolResult(outcome: TaskOutcome): {
  content: { type: 'text'; text: string }[]
  structuredContent: Record<string, unknown>
  isError?: boolean
} {
  if (outcome.ok)
    return {
      content: [{ type: 'text', text: JSON.stringify(outcome.response) }],
      structuredContent: outcome.response,
    }
  const body: Record<string, unknown> = {
    ...failedTaskBody(outcome.error, outcome.context),
    ...(outcome.adcpVersion ? { adcp_version: outcome.adcpVersion } : {}),
  }
  return {
    isError: true,
    content: [
      { type: 'text', text: JSON.stringify(body) },
      { type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` },
    ],
    structuredContent: body,
  }
}

/**
 * Serves the tasks over MCP streamable HTTP in stateless mode (a server and transport per request, JSON
 * responses), with the official SDK's web-standard transport.
 */
export function createMcpHandler(options: {
  name: string
  version: string
  tasks: readonly AnyTask[]
  call: (call: TaskCall) => Promise<TaskOutcome>
}): (request: Request, signer?: VerifiedSigner) => Promise<Response> {
  const byName = new Map(options.tasks.map((task) => [task.name, task]))
  const tools = options.tasks.map((task) => ({
    name: task.name,
    description: task.description,
    inputSchema: toolInputSchema(task),
    outputSchema: toolOutputSchema(task),
    annotations: toolAnnotations(task),
  }))
  return async (request, signer) => {
    const authorization = request.headers.get('authorization')
    const server = new Server(
      { name: options.name, version: options.version },
      { capabilities: { tools: {} } },
    )
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }) as never)
    server.setRequestHandler(CallToolRequestSchema, async (message) => {
      const task = byName.get(message.params.name)
      const outcome: TaskOutcome = task
        ? await options.call({
            task,
            args: message.params.arguments ?? {},
            authorization,
            protocol: 'mcp',
            ...(signer ? { signer } : {}),
          })
        : {
            ok: false,
            error: new AgentError('INVALID_REQUEST', `unknown tool ${message.params.name}`, { status: 404 }),
            context: rawContext(message.params.arguments),
          }
      return toolResult(outcome)
    })
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request)
    } finally {
      void server.close()
    }
  }
}
