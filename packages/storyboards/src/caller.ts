/**
 * How the runner calls an agent's tasks: through `@adwire/agent-client` (the official MCP and A2A clients),
 * every byte over the runner's fetch (credentials, size cap, redirect policy, routing), each answer with the
 * HTTP exchange behind it for the `http_status` family of checks.
 */
import { connectAgent, type AgentConnection, type Protocol } from '@adwire/agent-client'
import { createRunnerFetch, type Credentials, type HttpObservation, type RunnerFetchOptions } from './http.js'

export type { Protocol } from '@adwire/agent-client'

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

/** A call that produced no answer. */
const failure = (transport: Protocol, error: unknown, http: HttpObservation | undefined): TaskResponse => ({
  transport,
  body: undefined,
  transportError: true,
  error: error instanceof Error ? error.message : String(error),
  ...(http ? { http } : {}),
  raw: undefined,
})

/**
 * Connects a caller of the given protocol to the agent's base URL or endpoint URL (`…/mcp`, `…/a2a`).
 * @example const caller = await connect('mcp', agentUrl, { maxResponseBytes: 1 << 22, connectTimeoutMs: 5000 })
 */
export async function connect(
  protocol: Protocol,
  agentUrl: string,
  options: CallerOptions,
): Promise<TaskCaller> {
  const http = createRunnerFetch({
    ...options,
    agentUrl,
    credentials: options.credentials ?? { type: 'none' },
  })
  const agent: AgentConnection = await connectAgent(agentUrl, {
    protocol,
    fetch: http.fetch,
    connectTimeoutMs: options.connectTimeoutMs,
    clientInfo: { name: 'adwire-storyboards', version: '0.1.0' },
  })
  return {
    protocol,
    async call(task, args, timeoutMs) {
      http.reset()
      const result = await agent.call(task, args, { timeoutMs })
      const observed = http.last()
      return {
        transport: result.protocol,
        body: result.body,
        transportError: result.transportError,
        ...(result.error !== undefined ? { error: result.error } : {}),
        ...(observed ? { http: observed } : {}),
        raw: result.raw,
      }
    },
    async tasks() {
      return (await agent.describe()).tasks.map((task) => task.name)
    },
    close: () => agent.close(),
  }
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
