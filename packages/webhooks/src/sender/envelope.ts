/**
 * Builds the body of a delivery once, by registration channel (AdCP webhooks.mdx, "Registration channel
 * determines envelope shape"): the flat MCP-shape envelope, or an A2A Task (final states) /
 * TaskStatusUpdateEvent (interim states) in A2A v0.3 or 1.0 form. The body is serialised here, once, as compact JSON; the outbox stores
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
import canonicalize from 'canonicalize'
import type { ZodType } from 'zod'
import { WebhookError } from '../errors.js'
import type { ResolvedRegistration } from './registration.js'
import type { A2AVersion, TaskEvent } from './types.js'

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

/**
 * Serialises once, then validates what will actually be sent (the JSON round trip, not the input object):
 * it must have an RFC 8785 form and meet the schema; `inner` picks the validated object out of a wrapper.
 */
function serialise(
  payload: unknown,
  schema: ZodType<unknown>,
  what: string,
  inner: (sent: Record<string, unknown>) => unknown = (sent) => sent,
): string {
  let body: string
  try {
    body = JSON.stringify(payload)
  } catch (error) {
    throw invalid(`${what} is not serialisable as JSON: ${(error as Error).message}`, error)
  }
  const sent = JSON.parse(body) as Record<string, unknown>
  try {
    // Receivers key deliveries by the RFC 8785 form, which has no representation for an unpaired UTF-16
    // surrogate (JSON.stringify writes one as a `\ud83d` escape): such a body could never be accepted.
    canonicalize(sent)
  } catch (error) {
    throw invalid(
      `${what} holds a string with an unpaired UTF-16 surrogate, which RFC 8785 (I-JSON) forbids: ${(error as Error).message}`,
      error,
    )
  }
  try {
    parseShape(schema, inner(sent), what)
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

/** AdCP task status → A2A 1.0 `TaskState` enum name. */
const A2A_1_STATES: Readonly<Record<string, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  rejected: 'TASK_STATE_REJECTED',
  unknown: 'TASK_STATE_UNSPECIFIED',
}

/**
 * The A2A shape of a task event: a `Task` whose `artifacts[0]` carries the AdCP result in a DataPart for
 * completed, failed, canceled and rejected; a `TaskStatusUpdateEvent` whose status message carries it in its
 * first DataPart otherwise. The registration's `context` rides in the DataPart.
 * - v0.3 (default): the bare object with `kind` members (`task`, `status-update`, `message`, `text`,
 *   `data`), lowercase states and role `agent`;
 * - 1.0: the StreamResponse wrapper `{task}` / `{statusUpdate}`, `TASK_STATE_*` states, role `ROLE_AGENT`,
 *   parts `{text}` / `{data}` and no `kind` anywhere (AdCP a2a-response-extraction vectors `a2a-1.0-*`).
 */
export function buildA2ABody(
  registration: ResolvedRegistration,
  event: TaskEvent,
  timestamp: string,
  version: A2AVersion = '0.3',
): BuiltBody {
  checkEvent(event)
  if (!TaskStatusSchema.safeParse(event.status).success)
    throw invalid(
      `event.status "${String(event.status)}" is not a task status (${TaskStatusSchema.options.join(', ')})`,
    )
  const v1 = version === '1.0'
  const kind = (name: string) => (v1 ? {} : { kind: name })
  // The ids of the A2A Task the buyer holds, when the registration came with one; else the AdCP task's.
  const taskId = registration.a2aTask?.id ?? event.task_id
  const contextId = registration.a2aTask?.contextId ?? event.context_id ?? event.task_id
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
    ...(event.message !== undefined ? [{ ...kind('text'), text: event.message }] : []),
    ...(data !== undefined ? [{ ...kind('data'), data }] : []),
  ]
  const status = {
    state: v1 ? (A2A_1_STATES[event.status] ?? 'TASK_STATE_UNSPECIFIED') : event.status,
    timestamp: event.timestamp ?? timestamp,
  }
  const terminal = TERMINAL_TASK_STATUSES.has(event.status)
  const body = terminal
    ? {
        ...kind('task'),
        id: taskId,
        contextId,
        status,
        artifacts: [{ artifactId: `${event.task_id}-result`, name: event.task_type, parts }],
      }
    : {
        ...kind('status-update'),
        taskId,
        contextId,
        status: {
          ...status,
          message: {
            ...kind('message'),
            role: v1 ? 'ROLE_AGENT' : 'agent',
            messageId: crypto.randomUUID(),
            taskId,
            contextId,
            parts,
          },
        },
        // A2A 1.0 dropped `final` from TaskStatusUpdateEvent (the stream's end says it).
        ...(v1 ? {} : { final: false }),
      }
  const wrapper = terminal ? 'task' : 'statusUpdate'
  const payload = v1 ? { [wrapper]: body } : body
  const schema = (terminal ? A2ATaskSchema : A2ATaskStatusUpdateEventSchema) as unknown as ZodType<unknown>
  const what = `A2A ${version} ${terminal ? 'Task' : 'TaskStatusUpdateEvent'}`
  return {
    idempotencyKey: crypto.randomUUID(),
    body: serialise(payload, schema, what, v1 ? (sent) => sent[wrapper] : undefined),
  }
}
