/** What one task call gives back, and the reading of the AdCP response object out of a transport result. */
import type { Protocol } from './endpoint.js'

/** What one task call gave back. */
export interface TaskResult {
  readonly protocol: Protocol
  /** The AdCP response object (MCP `structuredContent` or its JSON text; the A2A DataPart), or `{adcp_error}`. */
  readonly body: Record<string, unknown> | undefined
  /** The transport marked the call failed (MCP `isError` or a JSON-RPC error; A2A failed/rejected task). */
  readonly transportError: boolean
  /** Why the call produced no answer at all (timeout, connection refused, HTTP error), when it did not. */
  readonly error?: string
  /** The error behind {@link TaskResult.error}, for callers that classify it. */
  readonly cause?: unknown
  /** The A2A task state (`TASK_STATE_COMPLETED`, …), when the answer was a task. */
  readonly taskState?: string
  /** The transport-level result, for failure reports. */
  readonly raw: unknown
}

/** A JSON object (the one guard of this package). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** A call that produced no answer. */
export const failure = (protocol: Protocol, error: unknown): TaskResult => ({
  protocol,
  body: undefined,
  transportError: true,
  error: error instanceof Error ? error.message : String(error),
  cause: error,
  raw: undefined,
})

/** The AdCP response object of an MCP tool result: `structuredContent`, else the JSON of its first text part. */
export function mcpBody(result: {
  structuredContent?: unknown
  content?: unknown
}): Record<string, unknown> | undefined {
  if (isRecord(result.structuredContent)) return result.structuredContent
  const first = Array.isArray(result.content)
    ? (result.content[0] as { type?: string; text?: string } | undefined)
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
 * The AdCP error of a task result, when the agent answered one (`adcp_error`, or the first of `errors`).
 *
 * @example adcpError({ protocol: 'mcp', body: { adcp_error: { code: 'RATE_LIMITED' } }, transportError: true, raw: {} })
 */
export function adcpError(result: TaskResult): Record<string, unknown> | undefined {
  const body = result.body
  if (!body) return undefined
  if (isRecord(body.adcp_error)) return body.adcp_error
  if (result.transportError && Array.isArray(body.errors) && isRecord(body.errors[0])) return body.errors[0]
  return undefined
}
