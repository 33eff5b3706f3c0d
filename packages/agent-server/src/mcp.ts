import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { rawContext, type TaskCall, type TaskOutcome } from './core.js'
import { AgentError, failedTaskBody } from './errors.js'
import type { AnyTask, VerifiedSigner } from './types.js'

const ENVELOPE_PROPERTIES: Record<string, unknown> = {
  idempotency_key: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{16,255}$' },
  context: { type: 'object', description: 'Echoed unchanged in the response and in webhooks' },
  context_id: { type: 'string' },
  push_notification_config: {
    type: 'object',
    description: 'Where status changes of an async task are pushed',
  },
  governance_context: {},
}

/** The tool's input JSON Schema: the task input plus the envelope fields every task accepts. */
function inputJsonSchema(task: AnyTask): Record<string, unknown> {
  let schema: Record<string, unknown>
  try {
    schema = z.toJSONSchema(task.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  } catch {
    schema = { type: 'object' }
  }
  delete schema.$schema
  const properties = { ...ENVELOPE_PROPERTIES, ...((schema.properties as Record<string, unknown>) ?? {}) }
  const required = new Set((schema.required as string[] | undefined) ?? [])
  if (task.idempotent) required.add('idempotency_key')
  return { ...schema, type: 'object', properties, ...(required.size ? { required: [...required] } : {}) }
}

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
  const body: Record<string, unknown> = { ...failedTaskBody(outcome.error, outcome.context) }
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
    inputSchema: inputJsonSchema(task),
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
