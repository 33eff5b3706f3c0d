/**
 * Builds the body of a delivery once, by registration channel (AdCP webhooks.mdx, "Registration channel
 * determines envelope shape"): the flat MCP-shape envelope, or an A2A v0.3 Task (final states) /
 * TaskStatusUpdateEvent (interim states). The body is serialised here, once, as compact JSON; the outbox stores
 * these exact bytes and every attempt sends them.
 */
import {
  A2ATaskSchema,
  A2ATaskStatusUpdateEventSchema,
  McpWebhookPayloadSchema,
  parseShape,
  SchemaError,
  TaskStatusSchema,
  TERMINAL_TASK_STATUSES,
} from '@adwire/schemas'
import type { ZodType } from 'zod'
import { WebhookError } from '../errors.js'
import type { ResolvedRegistration } from './registration.js'
import type { TaskEvent } from './types.js'

/** A serialised delivery: the body and the key that names it on every retry. */
export interface BuiltBody {
  /** The envelope's `idempotency_key` (MCP), or the outbox key of an A2A delivery (which carries none). */
  readonly idempotencyKey: string
  readonly body: string
}

const invalid = (message: string, cause?: unknown) =>
  new WebhookError('INVALID_REQUEST', message, cause === undefined ? undefined : { cause })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Serialises once, then validates what will actually be sent (the JSON round trip, not the input object). */
function serialise(payload: unknown, schema: ZodType<unknown>, what: string): string {
  let body: string
  try {
    body = JSON.stringify(payload)
  } catch (error) {
    throw invalid(`${what} is not serialisable as JSON: ${(error as Error).message}`, error)
  }
  try {
    parseShape(schema, JSON.parse(body), what)
  } catch (error) {
    if (SchemaError.is(error)) throw invalid(error.message, error)
    throw error
  }
  return body
}

function checkEvent(event: TaskEvent): void {
  if (!isObject(event)) throw invalid('an event is required')
  if (typeof event.task_id !== 'string' || event.task_id === '') throw invalid('event.task_id is required')
  if (event.result !== undefined && !isObject(event.result))
    throw invalid('event.result must be a JSON object')
  if (event.timestamp !== undefined && Number.isNaN(Date.parse(event.timestamp)))
    throw invalid(`event.timestamp is not an ISO 8601 time: ${event.timestamp}`)
}

/**
 * The MCP-shape envelope (`core/mcp-webhook-payload.json`): `operation_id` and `context` echoed verbatim from
 * the registration, `token` echoed when registered, `timestamp` fixed now, a fresh UUID v4 `idempotency_key`.
 * Validated against the AdCP schema; throws `INVALID_REQUEST`.
 */
export function buildMcpBody(
  registration: ResolvedRegistration,
  event: TaskEvent,
  timestamp: string,
): BuiltBody {
  checkEvent(event)
  const idempotencyKey = crypto.randomUUID()
  const payload = {
    idempotency_key: idempotencyKey,
    operation_id: registration.operationId,
    task_id: event.task_id,
    task_type: event.task_type,
    status: event.status,
    timestamp: event.timestamp ?? timestamp,
    ...(event.message !== undefined ? { message: event.message } : {}),
    ...(event.notification_id !== undefined ? { notification_id: event.notification_id } : {}),
    ...(event.context_id !== undefined ? { context_id: event.context_id } : {}),
    ...(event.protocol !== undefined ? { protocol: event.protocol } : {}),
    ...(registration.context !== undefined ? { context: registration.context } : {}),
    ...(registration.token !== undefined ? { token: registration.token } : {}),
    ...(event.result !== undefined ? { result: event.result } : {}),
  }
  // The full output type of the schema (every task result) is too deep to instantiate here.
  const schema = McpWebhookPayloadSchema as unknown as ZodType<unknown>
  return { idempotencyKey, body: serialise(payload, schema, 'MCP webhook envelope') }
}

/**
 * The A2A v0.3 shape: a `Task` (`kind: "task"`) whose `artifacts[0]` carries the AdCP result in a DataPart for
 * completed, failed, canceled and rejected; a `TaskStatusUpdateEvent` (`kind: "status-update"`) whose status
 * message carries it in its first DataPart otherwise. The registration's `context` rides in the DataPart.
 */
export function buildA2ABody(
  registration: ResolvedRegistration,
  event: TaskEvent,
  timestamp: string,
): BuiltBody {
  checkEvent(event)
  if (!TaskStatusSchema.safeParse(event.status).success)
    throw invalid(
      `event.status "${String(event.status)}" is not a task status (${TaskStatusSchema.options.join(', ')})`,
    )
  const contextId = event.context_id ?? event.task_id
  const data =
    event.result !== undefined || registration.context !== undefined
      ? {
          ...event.result,
          ...(registration.context !== undefined && !(event.result && 'context' in event.result)
            ? { context: registration.context }
            : {}),
        }
      : undefined
  const parts = [
    ...(event.message !== undefined ? [{ kind: 'text', text: event.message }] : []),
    ...(data !== undefined ? [{ kind: 'data', data }] : []),
  ]
  const status = { state: event.status, timestamp: event.timestamp ?? timestamp }
  const terminal = TERMINAL_TASK_STATUSES.has(event.status)
  const payload = terminal
    ? {
        kind: 'task',
        id: event.task_id,
        contextId,
        status,
        artifacts: [{ artifactId: `${event.task_id}-result`, name: event.task_type, parts }],
      }
    : {
        kind: 'status-update',
        taskId: event.task_id,
        contextId,
        status: {
          ...status,
          message: {
            kind: 'message',
            role: 'agent',
            messageId: crypto.randomUUID(),
            taskId: event.task_id,
            contextId,
            parts,
          },
        },
        final: false,
      }
  const schema = (terminal ? A2ATaskSchema : A2ATaskStatusUpdateEventSchema) as unknown as ZodType<unknown>
  return {
    idempotencyKey: crypto.randomUUID(),
    body: serialise(payload, schema, terminal ? 'A2A Task' : 'A2A TaskStatusUpdateEvent'),
  }
}
