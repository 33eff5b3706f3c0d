import {
  AsyncResponseDataSchema,
  CollectionListChangedWebhookSchema,
  detectWebhookFormat,
  McpWebhookPayloadSchema,
  parseWebhookPayload,
  PropertyListChangedWebhookSchema,
  SchemaError,
  TaskStatusSchema,
  toSchemaIssues,
} from '@adwire/schemas'
import type { ZodType } from 'zod'
import { readKeyedEvent } from './keyed-events.js'
import { Rejection } from './respond.js'
import type { PayloadShape } from './types.js'

/** What the receiver needs from a validated body. */
export interface Envelope {
  readonly shape: PayloadShape
  /**
   * The delivery's idempotency key. A2A deliveries carry none: a retry repeats the same JSON, so the receiver
   * keys them by task and canonical payload fingerprint instead.
   */
  readonly idempotencyKey?: string
  readonly notificationId?: string
  readonly operationId?: string
  readonly taskId?: string
  readonly taskType?: string
  readonly status?: string
  readonly terminal: boolean
  readonly data: Record<string, unknown> | null
  /**
   * `{status, value}` in a channel-neutral form: what two terminal observations of one task are compared on,
   * whichever channel (MCP or A2A) each arrived by; present on terminal statuses only. See
   * {@link terminalComparison}.
   */
  readonly comparison?: unknown
  /** The token the sender echoed, if any. */
  readonly token?: string
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const invalid = (code: string, message: string) => new Rejection(400, code, message)

/**
 * Validates the body against its shape (after the signature was verified; AdCP checklist step 14 has
 * already refused duplicate keys) and extracts the dedup key and task identity. Envelope errors use the codes
 * of the `webhook-receiver-envelope` vectors: `missing_envelope_fields`, `missing_idempotency_key`,
 * `invalid_envelope_status`.
 */
export function readEnvelope(payload: unknown, declared: PayloadShape | undefined): Envelope {
  if (!isObject(payload)) throw invalid('invalid_envelope', 'a webhook body must be a JSON object')
  const shape = declared ?? detectWebhookFormat(payload) ?? 'mcp'
  switch (shape) {
    case 'mcp':
      return readMcp(payload)
    case 'a2a':
      return readA2A(payload)
    case 'property-list':
    case 'collection-list':
      return readListEvent(payload, shape)
    case 'artifact-push':
    case 'revocation-notification':
    case 'creative-status-changed':
    case 'creative-purged':
    case 'capabilities-changed':
    case 'account-status-changed':
      return readKeyedEvent(payload, shape)
  }
}

/**
 * Members of an AdCP result that belong to the call, not to the outcome: the echoed request `context` (the
 * sender puts it inside the A2A DataPart but beside the MCP `result`) and the replay marker `replayed`
 * (AdCP async-identity-and-convergence: transport fields are excluded from the comparison record).
 */
const ENVELOPE_ONLY_MEMBERS = new Set(['context', 'replayed'])

/**
 * The channel-neutral comparison record of a task observation: the normalised task status (A2A
 * `TASK_STATE_COMPLETED` and MCP `completed` alike) and the AdCP result without envelope-only members, an
 * empty result counting as none. `task_type` is left out: the task id already fixes it, and A2A deliveries do
 * not carry it, so including it would make the same outcome over MCP and over A2A conflict.
 *
 * @example
 * terminalComparison('completed', { media_buy_id: 'mb_1', context: { c: 1 } })
 * // { status: 'completed', value: { media_buy_id: 'mb_1' } }
 */
export function terminalComparison(status: string, value: unknown): { status: string; value: unknown } {
  if (!isObject(value)) return { status, value: value ?? null }
  const kept = Object.entries(value).filter(([name]) => !ENVELOPE_ONLY_MEMBERS.has(name))
  return { status, value: kept.length === 0 ? null : Object.fromEntries(kept) }
}

/** The envelope members the receiver reads, as the schema guarantees them after a successful parse. */
interface McpEnvelopeFields {
  readonly idempotency_key: string
  readonly operation_id: string
  readonly task_id: string
  readonly task_type: string
  readonly status: string
  readonly notification_id?: string
  readonly token?: string
}

const ENVELOPE_FIELDS = ['operation_id', 'task_id', 'task_type', 'status', 'timestamp'] as const

/** The task statuses of the schema's enum, for the early `invalid_envelope_status` check. */
const TASK_STATUSES: ReadonlySet<string> = new Set(TaskStatusSchema.options)

// Validated as a plain object: the schema's full output type (every task result) is too deep to instantiate here.
const MCP_ENVELOPE = McpWebhookPayloadSchema as unknown as ZodType<McpEnvelopeFields>
/** The same envelope schema without `result` (still loose: other members pass). */
const MCP_MEMBERS = McpWebhookPayloadSchema.omit({ result: true }) as unknown as ZodType<McpEnvelopeFields>
/**
 * The members of the `result` union, the one that last accepted a result first. A union accepts what any of
 * its members accepts, in whatever order they are tried; zod tries them in order and builds the issues of
 * each member that fails before the one that accepts, most of the cost of a delivery's envelope check.
 */
const RESULT_MEMBERS: ZodType[] = [...(AsyncResponseDataSchema.options as unknown as ZodType[])]

/** Whether a member of the `result` union accepts `result`, trying the last one that accepted one first. */
function resultAccepted(result: unknown): boolean {
  for (let index = 0; index < RESULT_MEMBERS.length; index += 1) {
    const member = RESULT_MEMBERS[index]!
    if (!member.safeParse(result).success) continue
    if (index > 0) {
      RESULT_MEMBERS.splice(index, 1)
      RESULT_MEMBERS.unshift(member)
    }
    return true
  }
  return false
}

/**
 * The envelope members when the full schema accepts `payload`, proved with the same schemas: every member but
 * `result` by the envelope schema without it, and `result` (when present) by a member of its union. Undefined
 * when that proof fails, and then the full schema fails too (and words the error).
 */
function acceptedMembers(payload: Record<string, unknown>): McpEnvelopeFields | undefined {
  const members = MCP_MEMBERS.safeParse(payload)
  if (!members.success) return undefined
  if (payload.result !== undefined && !resultAccepted(payload.result)) return undefined
  return members.data
}

function readMcp(payload: Record<string, unknown>): Envelope {
  const missing = ENVELOPE_FIELDS.filter((field) => payload[field] === undefined)
  if (missing.length === ENVELOPE_FIELDS.length) {
    throw invalid(
      'missing_envelope_fields',
      `not a webhook envelope: missing ${missing.join(', ')} (a bare result is not a valid body)`,
    )
  }
  if (typeof payload.idempotency_key !== 'string') {
    throw invalid('missing_idempotency_key', 'the envelope has no idempotency_key; it cannot be deduplicated')
  }
  if (typeof payload.status === 'string' && !TASK_STATUSES.has(payload.status)) {
    throw invalid(
      'invalid_envelope_status',
      `status "${payload.status}" is not a task status (${TaskStatusSchema.options.join(', ')})`,
    )
  }
  let envelope = acceptedMembers(payload)
  if (!envelope) {
    // Refused: the full schema's first issue is the message.
    const result = MCP_ENVELOPE.safeParse(payload)
    if (!result.success) {
      const issues = toSchemaIssues(result.error.issues)
      const first = issues[0]
      const code = missing.length > 0 ? 'missing_envelope_fields' : 'invalid_envelope'
      throw invalid(
        code,
        `invalid webhook envelope: ${first ? `${first.path || '(root)'}: ${first.message}` : 'schema mismatch'}`,
      )
    }
    envelope = result.data
  }
  const parsed = parseWebhookPayload(payload, { format: 'mcp' })
  return {
    shape: 'mcp',
    idempotencyKey: envelope.idempotency_key,
    ...(envelope.notification_id ? { notificationId: envelope.notification_id } : {}),
    operationId: envelope.operation_id,
    taskId: envelope.task_id,
    taskType: envelope.task_type,
    status: envelope.status,
    terminal: parsed.terminal,
    data: parsed.data,
    ...(parsed.terminal ? { comparison: terminalComparison(envelope.status, payload.result) } : {}),
    ...(typeof envelope.token === 'string' ? { token: envelope.token } : {}),
  }
}

function readA2A(payload: Record<string, unknown>): Envelope {
  let parsed
  try {
    parsed = parseWebhookPayload(payload, { format: 'a2a' })
  } catch (error) {
    if (SchemaError.is(error)) throw invalid('invalid_envelope', error.message)
    throw error
  }
  if (parsed.format !== 'a2a')
    throw invalid('invalid_envelope', 'expected an A2A Task or TaskStatusUpdateEvent')
  return {
    shape: 'a2a',
    taskId: parsed.taskId,
    status: parsed.status,
    terminal: parsed.terminal,
    data: parsed.data,
    ...(parsed.terminal ? { comparison: terminalComparison(parsed.status, parsed.data) } : {}),
  }
}

function readListEvent(
  payload: Record<string, unknown>,
  shape: 'property-list' | 'collection-list',
): Envelope {
  if (typeof payload.idempotency_key !== 'string') {
    throw invalid('missing_idempotency_key', 'the event has no idempotency_key; it cannot be deduplicated')
  }
  // The body's `signature` member is a marker: any string is accepted and it never authenticates anything.
  const schema =
    shape === 'property-list' ? PropertyListChangedWebhookSchema : CollectionListChangedWebhookSchema
  const result = schema.safeParse(payload)
  if (!result.success) {
    const first = toSchemaIssues(result.error.issues)[0]
    throw invalid(
      'invalid_envelope',
      `invalid ${shape} event: ${first ? `${first.path || '(root)'}: ${first.message}` : 'schema mismatch'}`,
    )
  }
  return {
    shape,
    idempotencyKey: payload.idempotency_key,
    status: typeof payload.event === 'string' ? payload.event : undefined,
    terminal: false,
    data: payload,
  } as Envelope
}
