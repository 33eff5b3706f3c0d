/**
 * How the storyboard runner calls an agent's tasks: over MCP with the official `@modelcontextprotocol/sdk`
 * client (streamable HTTP) or over A2A with the official `@a2a-js/sdk` client, each giving back the AdCP
 * response object the storyboard's paths are resolved against.
 */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client as A2AClient,
} from '@a2a-js/sdk/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'

/** The AdCP A2A profile extension URI (a2a-profile-extension.mdx). */
export const ADCP_A2A_EXTENSION = 'https://adcontextprotocol.org/extensions/adcp/v3'

export type TransportName = 'mcp' | 'a2a'

/** What one task call gave back. */
export interface TaskResponse {
  transport: TransportName
  /** The AdCP response object (MCP structuredContent or its JSON text; the A2A DataPart). */
  body: Record<string, unknown> | undefined
  /** The transport marked the call failed (MCP `isError` or a JSON-RPC error; A2A failed/rejected task). */
  transportError: boolean
  /** The transport-level result, for failure messages. */
  raw: unknown
}

/** Calls tasks on one agent. */
export interface TaskCaller {
  readonly transport: TransportName
  call(task: string, args: Record<string, unknown>): Promise<TaskResponse>
  /** The task names the agent advertises (MCP tools, A2A skills). */
  tasks(): Promise<string[]>
  close(): Promise<void>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Options of a caller. */
export interface CallerOptions {
  /** Sent as `Authorization: Bearer`. */
  token?: string
  /**
   * Where the agent's public origin is reached (like a hosts-file entry): URLs the agent advertises on
   * `publicOrigin` (the A2A card's interface URL) are fetched from `localOrigin` instead.
   */
  route?: { publicOrigin: string; localOrigin: string }
}

const fetcher =
  ({ token, route }: CallerOptions): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers)
    if (token) headers.set('authorization', `Bearer ${token}`)
    let target = input instanceof Request ? input.url : String(input)
    if (route && target.startsWith(route.publicOrigin)) {
      target = route.localOrigin + target.slice(route.publicOrigin.length)
    }
    return fetch(target, { ...init, headers })
  }

/**
 * Connects the official MCP client to `${agentUrl}/mcp`.
 * @example const caller = await mcpCaller('http://127.0.0.1:4200')
 */
export async function mcpCaller(agentUrl: string, options: CallerOptions = {}): Promise<TaskCaller> {
  const client = new Client({ name: 'adwire-storyboard-runner', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agentUrl}/mcp`), { fetch: fetcher(options) }),
  )
  return {
    transport: 'mcp',
    async call(task, args) {
      try {
        const result = await client.callTool({ name: task, arguments: args })
        let body = isRecord(result.structuredContent) ? result.structuredContent : undefined
        if (!body && Array.isArray(result.content)) {
          const first = result.content[0] as { type?: string; text?: string } | undefined
          if (first?.type === 'text' && typeof first.text === 'string') {
            try {
              const parsed: unknown = JSON.parse(first.text)
              if (isRecord(parsed)) body = parsed
            } catch {
              // a non-JSON text result leaves body undefined
            }
          }
        }
        return { transport: 'mcp', body, transportError: result.isError === true, raw: result }
      } catch (error) {
        if (!(error instanceof McpError)) throw error
        const data = isRecord(error.data) ? error.data : undefined
        return {
          transport: 'mcp',
          body: data && isRecord(data.adcp_error) ? { adcp_error: data.adcp_error } : undefined,
          transportError: true,
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

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value: value as Record<string, unknown> },
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
 * Connects the official A2A client to the agent (agent card at `${agentUrl}/.well-known/agent-card.json`),
 * activating the AdCP extension on every message.
 * @example const caller = await a2aCaller('http://127.0.0.1:4200')
 */
export async function a2aCaller(agentUrl: string, options: CallerOptions = {}): Promise<TaskCaller> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetcher(options) })],
    }),
  )
  const client: A2AClient = await factory.createFromUrl(agentUrl)
  return {
    transport: 'a2a',
    async call(task, args) {
      const result = await client.sendMessage(
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
        { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
      )
      if (!('status' in result)) {
        return { transport: 'a2a', body: lastDataPart(result.parts), transportError: false, raw: result }
      }
      const a2aTask = result as Task
      const state = String(a2aTask.status?.state ?? '')
      const body =
        lastDataPart(a2aTask.artifacts.flatMap((artifact) => artifact.parts)) ??
        lastDataPart(a2aTask.status?.message?.parts)
      return {
        transport: 'a2a',
        body,
        transportError: /FAILED|REJECTED/i.test(state),
        raw: a2aTask,
      }
    },
    async tasks() {
      const card = await client.getAgentCard()
      return card.skills.map((skill) => skill.id)
    },
    close: async () => {},
  }
}
