import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import {
  BuildCreativeRequestSchema,
  CreativeManifestSchema,
  FormatIdSchema,
  ImageAssetSchema,
  ListCreativeFormatsRequestSchema,
  McpWebhookPayloadSchema,
  parseFormatId,
  parseShape,
  PreviewCreativeRequestSchema,
  PushNotificationConfigSchema,
  SchemaError,
  TaskStatusSchema,
} from '../src/index.js'

const formatId = { agent_url: 'https://creative.example.com', id: 'display_300x250' }
const envelope = {
  idempotency_key: 'whk_01HW9D3H8FZP2N6R8T0V4X6Z9B',
  operation_id: 'op_001',
  task_id: 'task_001',
  task_type: 'create_media_buy',
  status: 'completed',
  timestamp: '2026-04-18T10:00:00Z',
}

function failure(schema: z.ZodType, value: unknown): SchemaError {
  try {
    parseShape(schema, value, 'request')
  } catch (error) {
    if (SchemaError.is(error)) return error
    throw error
  }
  throw new Error('expected the value to be rejected')
}

// [what, schema, input, the path of the first issue, a fragment of its message]
const cases: Array<[string, z.ZodType, unknown, string, RegExp]> = [
  ['bare string format_id', FormatIdSchema, 'display_300x250', '', /expected object, received string/],
  ['format_id without agent_url', FormatIdSchema, { id: 'display_300x250' }, 'agent_url', /expected string/],
  [
    'format_id with a relative agent_url',
    FormatIdSchema,
    { ...formatId, agent_url: '/formats' },
    'agent_url',
    /absolute URI/,
  ],
  ['format_id id with a space', FormatIdSchema, { ...formatId, id: 'display 300' }, 'id', /Invalid string/],
  [
    'bare string in format_ids[1]',
    ListCreativeFormatsRequestSchema,
    { format_ids: [formatId, 'display_728x90'] },
    'format_ids[1]',
    /expected object, received string/,
  ],
  ['unknown task status', TaskStatusSchema, 'done', '', /Invalid option/],
  [
    'webhook without idempotency_key',
    McpWebhookPayloadSchema,
    { ...envelope, idempotency_key: undefined },
    'idempotency_key',
    /expected string/,
  ],
  [
    'webhook idempotency_key too short',
    McpWebhookPayloadSchema,
    { ...envelope, idempotency_key: 'abc' },
    'idempotency_key',
    /Too small.*16/,
  ],
  [
    'webhook with status "active"',
    McpWebhookPayloadSchema,
    { ...envelope, status: 'active' },
    'status',
    /Invalid option/,
  ],
  [
    'webhook timestamp not a date-time',
    McpWebhookPayloadSchema,
    { ...envelope, timestamp: 'yesterday' },
    'timestamp',
    /datetime/,
  ],
  [
    'push config without url',
    PushNotificationConfigSchema,
    { operation_id: 'op_1' },
    'url',
    /expected string/,
  ],
  [
    'push config credentials shorter than 32',
    PushNotificationConfigSchema,
    { url: 'https://buyer.example/hook', authentication: { schemes: ['HMAC-SHA256'], credentials: 'short' } },
    'authentication.credentials',
    /Too small/,
  ],
  [
    'image asset width as string',
    ImageAssetSchema,
    { asset_type: 'image', url: 'https://cdn.example/a.png', width: '300', height: 250 },
    'width',
    /expected number/,
  ],
  [
    'creative manifest asset of no known type',
    CreativeManifestSchema,
    { format_id: formatId, assets: { hero: { asset_type: 'hologram' } } },
    'assets.hero',
    /./,
  ],
  [
    'build_creative without idempotency_key',
    BuildCreativeRequestSchema,
    { target_format_id: formatId },
    'idempotency_key',
    /expected string/,
  ],
  [
    'preview_creative with a string request_type',
    PreviewCreativeRequestSchema,
    { request_type: 'several' },
    'request_type',
    /Invalid (option|input)/,
  ],
]

describe('invalid inputs fail with a readable path and message', () => {
  it.each(cases)('%s', (_what, schema, input, path, message) => {
    const error = failure(schema, input)
    expect(error.code).toBe('INVALID_REQUEST')
    expect(error.issues.length).toBeGreaterThan(0)
    expect(error.issues[0]!.path).toBe(path)
    expect(error.issues[0]!.message).toMatch(message)
    expect(error.message).toContain(`${path || '(root)'}: ${error.issues[0]!.message}`)
  })

  it('parseFormatId answers a bare string with INVALID_FORMAT_ID and says what to send', () => {
    expect(() => parseFormatId('display_300x250')).toThrowError(
      expect.objectContaining({
        code: 'INVALID_FORMAT_ID',
        message: expect.stringContaining('{"agent_url", "id"}'),
      }),
    )
    expect(parseFormatId(formatId)).toEqual(formatId)
  })

  it('toAdcpError gives the AdCP error object with the field path', () => {
    const error = failure(ListCreativeFormatsRequestSchema, { format_ids: ['x'] })
    expect(error.toAdcpError()).toEqual({
      code: 'INVALID_REQUEST',
      message: error.message,
      field: 'format_ids[0]',
      recovery: 'correctable',
    })
  })
})
