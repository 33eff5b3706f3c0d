/**
 * How the runner calls an agent's tasks: over MCP with the official `@modelcontextprotocol/sdk` client
 * (streamable HTTP at `<agent>/mcp`) or over A2A with the official `@a2a-js/sdk` client (agent card at
 * `<agent>/.well-known/agent-card.json`), each giving back the AdCP response object the storyboard's paths
 * are resolved against, and the HTTP exchange behind it.
 */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { StoryboardError } from './errors.js'
import { createRunnerFetch, type Credentials, type HttpObservation, type RunnerFetchOptions } from './http.js'

/** The AdCP A2A profile extension URI (a2a-profile-extension.mdx). */
export const ADCP_A2A_EXTENSION = 'https://adcontextprotocol.org/extensions/adcp/v3'

export type Protocol = 'mcp' | 'a2a'

/** What one task call gave back. */
export interface TaskResponse {
  transport: Protocol
  /** The AdCP response object (MCP structuredContent or its JSON text; the A2A DataPart). */
  body: Record<string, unknown> | undefined
  /** The transport marked the call failed (MCP `isError` or a JSON-RPC error; A2A failed/rejected task). */
  transportError: boolean
  /** Why the call produced no answer at all (timeout, connection refused, HTTP error), when it did not. */
  error?: string
  /** The HTTP exchange of the call. */
  http?: HttpObservation
  /** The transport-level result, for failure reports. */
  raw: unknown
}

/** Calls tasks on one agent with one set of credentials. */
export interface TaskCaller {
  readonly protocol: Protocol
  call(task: string, args: Record<string, unknown>, timeoutMs: number): Promise<TaskResponse>
  /** The task names the agent advertises (MCP tools, A2A skills). */
  tasks(): Promise<string[]>
  close(): Promise<void>
}

/** Options of a caller. */
export interface CallerOptions extends Omit<RunnerFetchOptions, 'agentUrl' | 'credentials'> {
  credentials?: Credentials
  /** How long connecting may take, ms. */
  connectTimeoutMs: number
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Runs `work` with a deadline; a hung agent never hangs the runner. */
export async function withTimeout<T>(
  ms: number,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort()
      reject(new StoryboardError('connection_failed', `${what} timed out after ${ms} ms`))
    }, ms)
  })
  try {
    return await Promise.race([work(controller.signal), deadline])
  } finally {
    clearTimeout(timer)
  }
}

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

const failure = (transport: Protocol, error: unknown, http: HttpObservation | undefined): TaskResponse => ({
  transport,
  body: undefined,
  transportError: true,
  error: error instanceof Error ? error.message : String(error),
  ...(http ? { http } : {}),
  raw: undefined,
})

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
  const client = new Client({ name: 'adwire-storyboards', version: '0.1.0' })
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

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
})

function lastDataPart(parts: readonly Part[] | undefined): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined
  for (const part of parts ?? []) {
    if (part.content?.$case === 'data' && isRecord(part.content.value)) found = part.content.value
  }
  return found
}

/**
 * Connects the official A2A client to the agent, activating the AdCP extension on every message.
 * @example const caller = await a2aCaller('http://127.0.0.1:4200', { maxResponseBytes: 1 << 22, connectTimeoutMs: 5000 })
 */
export async function a2aCaller(agentUrl: string, options: CallerOptions): Promise<TaskCaller> {
  const http = createRunnerFetch({
    ...options,
    agentUrl,
    credentials: options.credentials ?? { type: 'none' },
  })
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: http.fetch })],
    }),
  )
  const client = await withTimeout(options.connectTimeoutMs, `reading ${agentUrl}'s agent card`, () =>
    factory.createFromUrl(agentUrl),
  )
  return {
    protocol: 'a2a',
    async call(task, args, timeoutMs) {
      http.reset()
      try {
        const result = await withTimeout(timeoutMs, task, (signal) =>
          client.sendMessage(
            {
              tenant: '',
              message: {
                messageId: crypto.randomUUID(),
                contextId: '',
                taskId: '',
                role: Role.ROLE_USER,
                parts: [dataPart({ skill: task, input: args })],
                metadata: undefined,
                extensions: [],
                referenceTaskIds: [],
              },
              configuration: undefined,
              metadata: undefined,
            },
            { signal, serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
          ),
        )
        const observed = http.last()
        const extra = observed ? { http: observed } : {}
        if (!('status' in result)) {
          return {
            transport: 'a2a',
            body: lastDataPart(result.parts),
            transportError: false,
            ...extra,
            raw: result,
          }
        }
        const a2aTask = result as Task
        const body =
          lastDataPart(a2aTask.artifacts.flatMap((artifact) => artifact.parts)) ??
          lastDataPart(a2aTask.status?.message?.parts)
        const state = String(a2aTask.status?.state ?? '')
        return {
          transport: 'a2a',
          body,
          transportError: /FAILED|REJECTED/i.test(state),
          ...extra,
          raw: a2aTask,
        }
      } catch (error) {
        return failure('a2a', error, http.last())
      }
    },
    async tasks() {
      const card = await client.getAgentCard()
      return card.skills.map((skill) => skill.id)
    },
    close: async () => {},
  }
}

/**
 * Connects a caller of the given protocol.
 * @example const caller = await connect('mcp', agentUrl, { maxResponseBytes: 1 << 22, connectTimeoutMs: 5000 })
 */
export function connect(protocol: Protocol, agentUrl: string, options: CallerOptions): Promise<TaskCaller> {
  return protocol === 'mcp' ? mcpCaller(agentUrl, options) : a2aCaller(agentUrl, options)
}

/**
 * One call on a fresh connection (for steps whose `auth:` overrides the run's credentials): a refused
 * connection is a graded answer (its HTTP status), not a runner failure.
 */
export async function callOnce(
  protocol: Protocol,
  agentUrl: string,
  options: CallerOptions,
  task: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<TaskResponse> {
  const probe = createRunnerFetch({
    ...options,
    agentUrl,
    credentials: options.credentials ?? { type: 'none' },
  })
  let caller: TaskCaller | undefined
  try {
    caller = await connect(protocol, agentUrl, { ...options, fetch: probe.fetch })
    return await caller.call(task, args, timeoutMs)
  } catch (error) {
    return failure(protocol, error, probe.last())
  } finally {
    await caller?.close().catch(() => {})
  }
}
