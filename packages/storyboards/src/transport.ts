/**
 * How the runner calls an agent's tasks: over MCP with the official `@modelcontextprotocol/sdk` client
 * (streamable HTTP at `<agent>/mcp`) or over A2A with the official `@a2a-js/sdk` client (agent card at
 * `<agent>/.well-known/agent-card.json`), each giving back the AdCP response object the storyboard's paths
 * are resolved against, and the HTTP exchange behind it.
 */
import { StoryboardError } from './errors.js'
import { a2aCaller } from './a2a-caller.js'
import { createRunnerFetch, type Credentials, type HttpObservation, type RunnerFetchOptions } from './http.js'
import { mcpCaller } from './mcp-caller.js'

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

/** A JSON object. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
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

/** A call that produced no answer. */
export const failure = (
  transport: Protocol,
  error: unknown,
  http: HttpObservation | undefined,
): TaskResponse => ({
  transport,
  body: undefined,
  transportError: true,
  error: error instanceof Error ? error.message : String(error),
  ...(http ? { http } : {}),
  raw: undefined,
})

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
