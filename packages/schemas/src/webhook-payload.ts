/**
 * Telling an MCP-shape AdCP webhook from an A2A-shape one and extracting the AdCP data it carries
 * (AdCP 3.1 `docs/building/by-layer/L3/webhooks.mdx`, "Payload format detection"; A2A response extraction).
 */
import {
  A2ATaskSchema,
  A2ATaskStatusUpdateEventSchema,
  normalizeA2AState,
  TERMINAL_TASK_STATUSES,
  type A2APart,
  type A2ATask,
  type A2ATaskStatusUpdateEvent,
} from './a2a.js'
import { SchemaError } from './errors.js'
import { McpWebhookPayloadSchema, type McpWebhookPayload } from './generated/schemas.js'
import { parseShape } from './parse.js'

/** The AdCP data of a webhook: the task result or interim data, or `null` when it carries none. */
export type WebhookData = Record<string, unknown> | null

/** An MCP-shape webhook: the flat AdCP envelope (`core/mcp-webhook-payload.json`). */
export interface McpWebhook {
  readonly format: 'mcp'
  readonly taskId: string
  /** The task status, e.g. `completed`, `working`. */
  readonly status: string
  readonly terminal: boolean
  readonly data: WebhookData
  /** The envelope; validated against the schema only when `validate: true` was passed. */
  readonly payload: McpWebhookPayload
}

/** An A2A-shape webhook: a Task or a TaskStatusUpdateEvent, bare (v0.3) or in a 1.0 StreamResponse wrapper. */
export interface A2AWebhook {
  readonly format: 'a2a'
  readonly kind: 'task' | 'status-update'
  readonly taskId: string
  /** The state normalised to the AdCP spelling (`TASK_STATE_COMPLETED` → `completed`). */
  readonly status: string
  /** The state as sent. */
  readonly state: string
  readonly terminal: boolean
  readonly data: WebhookData
  readonly payload: A2ATask | A2ATaskStatusUpdateEvent
}

export type ParsedWebhookPayload = McpWebhook | A2AWebhook

export interface ParseWebhookPayloadOptions {
  /**
   * The shape the registration promised. Receivers should pass it: the registration channel decides the
   * shape, and detection from the body is only the fallback.
   */
  readonly format?: 'mcp' | 'a2a'
  /** Also validate an MCP envelope against `core/mcp-webhook-payload.json` (all required fields). */
  readonly validate?: boolean
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function decode(raw: unknown): unknown {
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array) && !(raw instanceof ArrayBuffer)) return raw
  try {
    const text = typeof raw === 'string' ? raw : new TextDecoder('utf-8', { fatal: true }).decode(raw)
    return JSON.parse(text)
  } catch (error) {
    throw new SchemaError('INVALID_REQUEST', `webhook body is not JSON: ${(error as Error).message}`, [], {
      cause: error,
    })
  }
}

/** Which shape a decoded body has: MCP (`status` string + `task_id`) or A2A (`status` object with `state`). */
export function detectWebhookFormat(body: unknown): 'mcp' | 'a2a' | undefined {
  if (!isObject(body)) return undefined
  if (typeof body.status === 'string' && typeof body.task_id === 'string') return 'mcp'
  const inner = isObject(body.task) ? body.task : isObject(body.statusUpdate) ? body.statusUpdate : body
  if (isObject(inner.status) && typeof inner.status.state === 'string') return 'a2a'
  return undefined
}

const firstData = (parts: readonly A2APart[] | undefined): WebhookData => {
  for (const part of parts ?? []) if ('data' in part && isObject(part.data)) return part.data
  return null
}
const lastData = (parts: readonly A2APart[] | undefined): WebhookData => {
  const list = parts ?? []
  for (let index = list.length - 1; index >= 0; index -= 1) {
    const part = list[index]!
    if ('data' in part && isObject(part.data)) return part.data
  }
  return null
}

function parseA2A(body: Record<string, unknown>): A2AWebhook {
  const wrapped = isObject(body.task)
    ? body.task
    : isObject(body.statusUpdate)
      ? body.statusUpdate
      : undefined
  const inner = wrapped ?? body
  const isEvent =
    isObject(body.statusUpdate) ||
    inner.kind === 'status-update' ||
    (typeof inner.taskId === 'string' && inner.id === undefined)
  if (isEvent) {
    const event = parseShape(A2ATaskStatusUpdateEventSchema, inner, 'A2A TaskStatusUpdateEvent')
    const status = normalizeA2AState(event.status.state)
    return {
      format: 'a2a',
      kind: 'status-update',
      taskId: event.taskId,
      status,
      state: event.status.state,
      terminal: TERMINAL_TASK_STATUSES.has(status),
      data: firstData(event.status.message?.parts),
      payload: event,
    }
  }
  const task = parseShape(A2ATaskSchema, inner, 'A2A Task')
  const status = normalizeA2AState(task.status.state)
  const terminal = TERMINAL_TASK_STATUSES.has(status)
  // Final states carry the result in the last DataPart of artifacts[0] (a text-only failure may put it in the
  // status message); interim states carry data in the first DataPart of the status message.
  const data = terminal
    ? (lastData(task.artifacts?.[0]?.parts) ?? firstData(task.status.message?.parts))
    : firstData(task.status.message?.parts)
  return {
    format: 'a2a',
    kind: 'task',
    taskId: task.id,
    status,
    state: task.status.state,
    terminal,
    data,
    payload: task,
  }
}

function parseMcp(body: Record<string, unknown>, validate: boolean): McpWebhook {
  if (validate) parseShape(McpWebhookPayloadSchema, body, 'MCP webhook payload')
  if (typeof body.task_id !== 'string' || typeof body.status !== 'string') {
    throw new SchemaError(
      'INVALID_REQUEST',
      'MCP webhook payload needs a string task_id and a string status',
      [{ path: typeof body.task_id !== 'string' ? 'task_id' : 'status', message: 'required string' }],
    )
  }
  const result = body.result
  return {
    format: 'mcp',
    taskId: body.task_id,
    status: body.status,
    terminal: TERMINAL_TASK_STATUSES.has(body.status),
    data: isObject(result) ? result : null,
    payload: body as McpWebhookPayload,
  }
}

/**
 * Parses a webhook body (raw bytes, a JSON string or an already-decoded value), tells MCP shape from A2A
 * shape and returns the AdCP data it carries, discriminated on `format`. Throws {@link SchemaError}
 * (`INVALID_REQUEST`) for a body that is neither.
 *
 * @example
 * const webhook = parseWebhookPayload(await request.text(), { format: registration.format })
 * if (webhook.terminal) settle(webhook.taskId, webhook.data)
 */
export function parseWebhookPayload(
  raw: unknown,
  options: ParseWebhookPayloadOptions = {},
): ParsedWebhookPayload {
  const body = decode(raw)
  if (!isObject(body)) throw new SchemaError('INVALID_REQUEST', 'webhook body must be a JSON object')
  const format = options.format ?? detectWebhookFormat(body)
  if (format === 'mcp') return parseMcp(body, options.validate ?? false)
  if (format === 'a2a') return parseA2A(body)
  throw new SchemaError(
    'INVALID_REQUEST',
    'webhook body is neither MCP shape (string status and task_id) nor A2A shape (status object with state)',
  )
}
