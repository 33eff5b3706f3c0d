/**
 * readEnvelope on MCP bodies accepts exactly what the full envelope schema accepts, with the same members, and
 * refuses the rest with the full schema's first issue: whatever order the members of the `result` union were
 * tried in before (the check tries first the member that accepted the last result).
 */
import { readConformanceJson } from '@adwire/conformance'
import { McpWebhookPayloadSchema, toSchemaIssues } from '@adwire/schemas'
import { describe, expect, it } from 'vitest'
import { readEnvelope } from '../src/receiver/envelope.js'
import { Rejection } from '../src/receiver/respond.js'

const receiverVectors = readConformanceJson('test-vectors/webhook-receiver-envelope.json') as {
  positive: Array<{ payload: Record<string, unknown> }>
  negative: Array<{ payload: Record<string, unknown> }>
}
const extraction = readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
  vectors: Array<{ format: string; payload: Record<string, unknown> }>
}

const base = {
  idempotency_key: 'whk_0123456789abcdef',
  operation_id: 'op_1',
  task_id: 'task_1',
  task_type: 'create_media_buy',
  status: 'working',
  timestamp: '2026-04-18T14:00:00Z',
}
const vectors = [
  ...receiverVectors.positive,
  ...receiverVectors.negative,
  ...extraction.vectors.filter((vector) => vector.format === 'mcp'),
].map((vector) => vector.payload)
const results = [
  ...vectors.map((payload) => payload.result).filter((result) => result !== undefined),
  { percentage: 40, current_step: 'matching_inventory' },
  { media_buy_id: 'mb_1' },
  {},
  null,
  5,
  'done',
  [],
  { percentage: 'forty' },
]
const payloads: Array<Record<string, unknown>> = [
  ...vectors,
  base,
  { ...base, extra: { any: 'thing' } },
  { ...base, timestamp: 'yesterday' },
  { ...base, task_type: 'make_coffee' },
  { ...base, notification_id: 'not valid!' },
  { ...base, token: 'short' },
  { ...base, operation_id: 7 },
  ...results.map((result) => ({ ...base, result })),
  ...results.map((result) => ({ ...base, status: 'completed', result, extra: 1 })),
]

/** What readEnvelope made of the payload: its members, or the refusal. */
function outcome(payload: Record<string, unknown>) {
  try {
    const { shape, idempotencyKey, notificationId, operationId, taskId, taskType, status, token } =
      readEnvelope(payload, 'mcp')
    return { shape, idempotencyKey, notificationId, operationId, taskId, taskType, status, token }
  } catch (error) {
    if (!(error instanceof Rejection)) throw error
    return { status: error.status, code: error.code, message: error.message }
  }
}

/** What the full schema says of the payload, in the same terms. */
function expected(payload: Record<string, unknown>) {
  const parsed = McpWebhookPayloadSchema.safeParse(payload)
  if (!parsed.success) {
    const first = toSchemaIssues(parsed.error.issues)[0]
    return { status: 400, message: `invalid webhook envelope: ${first?.path || '(root)'}: ${first?.message}` }
  }
  const data = parsed.data as Record<string, string | undefined>
  return {
    shape: 'mcp',
    idempotencyKey: data.idempotency_key,
    notificationId: data.notification_id || undefined,
    operationId: data.operation_id,
    taskId: data.task_id,
    taskType: data.task_type,
    status: data.status,
    token: data.token,
  }
}

describe('readEnvelope (MCP)', () => {
  it('accepts what the full envelope schema accepts, in any order of results, and nothing else', () => {
    // Three passes in different orders: the result member tried first changes from one body to the next.
    const orders = [payloads, [...payloads].reverse(), payloads.filter((_, index) => index % 2 === 0)]
    let accepted = 0
    let worded = 0
    for (const order of orders) {
      for (const payload of order) {
        const want = expected(payload)
        const got = outcome(payload)
        if ('message' in want && 'message' in got) {
          // Refused either way; the early checks (no envelope at all, key, status) may speak first.
          if (got.message?.startsWith('invalid webhook envelope')) {
            expect(got.message).toBe(want.message)
            worded += 1
          }
        } else {
          expect(got).toEqual(want)
          accepted += 1
        }
      }
    }
    // Both kinds are exercised, and the schema's wording of refusals.
    expect(accepted).toBeGreaterThan(10)
    expect(worded).toBeGreaterThan(10)
    expect(accepted).toBeLessThan(orders.reduce((sum, order) => sum + order.length, 0))
  })
})
