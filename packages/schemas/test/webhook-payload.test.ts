import { describe, expect, it } from 'vitest'
import { readConformanceJson } from '@adwire/conformance'
import { detectWebhookFormat, parseWebhookPayload, SchemaError } from '../src/index.js'

interface ExtractionVector {
  id: string
  description: string
  format: 'mcp' | 'a2a'
  payload: Record<string, unknown>
  expected_format: 'mcp' | 'a2a'
  expected_data: unknown
}
const { vectors } = readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
  vectors: ExtractionVector[]
}

describe('webhook-payload-extraction.json', () => {
  it('has the 12 vectors', () => expect(vectors).toHaveLength(12))

  it.each(vectors.map((vector) => [vector.id, vector] as const))('%s', (_id, vector) => {
    const raw = JSON.stringify(vector.payload)
    const parsed = parseWebhookPayload(raw)
    expect(parsed.format).toBe(vector.expected_format)
    expect(parsed.data).toEqual(vector.expected_data)
    expect(detectWebhookFormat(vector.payload)).toBe(vector.format)
    // The registration's declared shape gives the same answer as detection, from bytes too.
    expect(parseWebhookPayload(new TextEncoder().encode(raw), { format: vector.format }).data).toEqual(
      vector.expected_data,
    )
  })
})

describe('parseWebhookPayload', () => {
  it('unwraps A2A 1.0 StreamResponse wrappers and TASK_STATE_* states', () => {
    const task = parseWebhookPayload({
      task: {
        id: 't1',
        contextId: 'c1',
        status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-04-18T10:00:00Z' },
        artifacts: [
          {
            artifactId: 'a',
            parts: [{ data: { first: true } }, { text: 'done' }, { data: { creative_id: 'cr_1' } }],
          },
        ],
      },
    })
    expect(task).toMatchObject({
      format: 'a2a',
      kind: 'task',
      taskId: 't1',
      status: 'completed',
      terminal: true,
    })
    expect(task.data).toEqual({ creative_id: 'cr_1' })

    const update = parseWebhookPayload({
      statusUpdate: {
        taskId: 't1',
        contextId: 'c1',
        status: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          message: { role: 'agent', parts: [{ data: { reason: 'approval' } }, { data: { later: 1 } }] },
        },
      },
    })
    expect(update).toMatchObject({
      format: 'a2a',
      kind: 'status-update',
      status: 'input-required',
      terminal: false,
    })
    expect(update.data).toEqual({ reason: 'approval' })
  })

  it('reads a v0.3 TaskStatusUpdateEvent', () => {
    const parsed = parseWebhookPayload({
      kind: 'status-update',
      taskId: 't2',
      contextId: 'c2',
      final: false,
      status: {
        state: 'working',
        message: { role: 'agent', parts: [{ kind: 'data', data: { percentage: 10 } }] },
      },
    })
    expect(parsed).toMatchObject({
      format: 'a2a',
      kind: 'status-update',
      taskId: 't2',
      status: 'working',
      data: { percentage: 10 },
    })
  })

  it('falls back to the status message for a failed task without artifacts', () => {
    const parsed = parseWebhookPayload({
      id: 't3',
      status: {
        state: 'failed',
        message: {
          parts: [{ kind: 'data', data: { adcp_error: { code: 'RATE_LIMITED', message: 'slow down' } } }],
        },
      },
    })
    expect(parsed.data).toEqual({ adcp_error: { code: 'RATE_LIMITED', message: 'slow down' } })
  })

  it('validates the MCP envelope when asked', () => {
    const [incomplete] = vectors.filter((vector) => vector.id === 'mcp-missing-result')
    expect(() => parseWebhookPayload(incomplete!.payload, { validate: true })).toThrowError(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('idempotency_key'),
      }),
    )
    const [complete] = vectors.filter((vector) => vector.id === 'mcp-completed')
    expect(parseWebhookPayload(complete!.payload, { validate: true }).taskId).toBe('task_001')
  })

  it.each([
    ['not JSON', '{"task_id": ', /not JSON/],
    ['a JSON array', '[]', /JSON object/],
    ['neither shape', '{"status": 1}', /neither MCP shape/],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), /not JSON|decode|encoded/i],
    ['A2A task without an id', '{"status": {"state": "working"}}', /A2A Task/],
  ] as const)('rejects %s with INVALID_REQUEST', (_what, raw, message) => {
    let caught: unknown
    try {
      parseWebhookPayload(raw)
    } catch (error) {
      caught = error
    }
    expect(SchemaError.is(caught)).toBe(true)
    expect((caught as SchemaError).code).toBe('INVALID_REQUEST')
    expect((caught as SchemaError).message).toMatch(message)
  })

  it('trusts the declared shape over the body', () => {
    expect(() =>
      parseWebhookPayload({ id: 'x', status: { state: 'working' } }, { format: 'mcp' }),
    ).toThrowError(/task_id/)
  })
})
