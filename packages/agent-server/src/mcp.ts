import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { rawContext, type TaskCall, type TaskOutcome } from './core.js'
import { AgentError, failedTaskBody } from './errors.js'
import { toolAnnotations, toolInputSchema, toolOutputSchema } from './tool-schemas.js'
import type { AnyTask, VerifiedSigner } from './types.js'
import { rpcResultResponse } from './rpc-answer.js'

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
 * responses), with the official SDK's web-standard transport. Only POST is served: a stateless server has no
 * stream to offer on GET nor a session to end on DELETE, so both (and any other method) are `405` with
 * `Allow: POST`, which MCP clients read as "no server-initiated stream" (never a `200` with an empty body).
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
    if (request.method !== 'POST')
      return new Response(null, { status: 405, headers: { allow: 'POST', 'cache-control': 'no-store' } })
    const malformed = await argumentsNotAnObject(request)
    if (malformed) return malformed
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
      return await transport.handleRequest(acceptingJson(request))
    } finally {
      void server.close()
    }
  }
}

/**
 * A POST that accepts JSON but not `text/event-stream` (`Accept: application/json`, as raw JSON-RPC clients
 * send): every POST is answered as one JSON body here (`enableJsonResponse`), never a stream, so the request is
 * served as if it listed both rather than refused `406` by the transport's check for both types. Anything else
 * is passed through as it came (a POST accepting neither is still `406`).
 */
function acceptingJson(request: Request): Request {
  const accept = request.headers.get('accept') ?? ''
  if (request.method !== 'POST' || accept.includes('text/event-stream')) return request
  if (!accept.includes('application/json') && !accept.includes('*/*')) return request
  const headers = new Headers(request.headers)
  headers.set('accept', 'application/json, text/event-stream')
  return new Request(request, { headers })
}

/**
 * The answer to a `tools/call` whose `arguments` are present but not a JSON object (`"x"`, `[1]`, `42`): the
 * failed tool result `INVALID_REQUEST` on `arguments`, as for any other malformed task call. (The SDK's own
 * request schema would refuse it as a bare JSON-RPC error without an AdCP code.) Undefined for anything else.
 */
async function argumentsNotAnObject(request: Request): Promise<Response | undefined> {
  if (request.method !== 'POST') return undefined
  let message: unknown
  try {
    message = await request.clone().json()
  } catch {
    return undefined
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown }
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return undefined
  const args = (params as { arguments?: unknown }).arguments
  if (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args)))
    return undefined
  const error = new AgentError('INVALID_REQUEST', 'tool arguments must be a JSON object', {
    field: 'arguments',
    status: 400,
  })
  return rpcResultResponse(id, toolResult({ ok: false, error, context: undefined }))
}
