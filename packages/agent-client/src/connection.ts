/** What a connection to an agent offers, whichever the transport. */
import type { Protocol } from './endpoint.js'
import type { TaskResult } from './result.js'

/** Options of {@link AgentConnection.call}. */
export interface CallOptions {
  /** How long the call may take, ms. Default: the connection's `timeoutMs`. */
  readonly timeoutMs?: number
  /** Aborts the call. */
  readonly signal?: AbortSignal
}

/** What an agent says of itself: its name and the tasks it offers (MCP tools, A2A skills). */
export interface AgentDescription {
  /** MCP server title or name, A2A card name. */
  readonly name: string
  /** MCP instructions, A2A card description. */
  readonly description?: string
  readonly tasks: ReadonlyArray<{ readonly name: string; readonly description?: string }>
}

/** One connected agent. */
export interface AgentConnection {
  readonly protocol: Protocol
  /** The A2A protocol version spoken (`1.0`, `0.3`), or the MCP protocol version. */
  readonly protocolVersion: string
  /** Calls an AdCP task; never throws: a call with no answer is a {@link TaskResult} with `error`. */
  call(task: string, args: Record<string, unknown>, options?: CallOptions): Promise<TaskResult>
  /** The agent's name and tasks (MCP `tools/list`, A2A card skills). */
  describe(): Promise<AgentDescription>
  close(): Promise<void>
}

/** What a transport's connect takes (after {@link connectAgent} resolved the endpoint and bounded the fetch). */
export interface TransportOptions {
  readonly fetch: typeof fetch
  readonly timeoutMs: number
  readonly connectTimeoutMs: number
  readonly clientInfo: { readonly name: string; readonly version: string }
  readonly signal?: AbortSignal
}
