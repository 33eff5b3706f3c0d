import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { MemoryClaimStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BUYER_TOKEN, startAgent, tokens, type RunningAgent } from './testing/support.js'

let agent: RunningAgent

beforeAll(async () => {
  agent = await startAgent({
    auth: { tokens },
    idempotency: { store: new MemoryClaimStore(), replayTtlSeconds: 3600 },
  })
})
afterAll(() => agent.close())

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'test-buyer', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  })
  await client.connect(transport)
  return client
}

type ToolResult = {
  structuredContent?: Record<string, unknown>
  content: { type: string; text?: string }[]
  isError?: boolean
}

async function call(
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const client = await connect(token)
  try {
    return (await client.callTool({ name, arguments: args })) as ToolResult
  } finally {
    await client.close()
  }
}

const format = { agent_url: 'https://agent.example', id: 'display_300x250' }
const key = () => `key_${crypto.randomUUID()}`

describe('MCP', () => {
  it('lists the tasks as tools, with the envelope fields in the input schema', async () => {
    const client = await connect()
    const { tools } = await client.listTools()
    await client.close()
    expect(tools.map((tool) => tool.name)).toEqual([
      'get_adcp_capabilities',
      'list_creative_formats',
      'build_creative',
    ])
    const build = tools.find((tool) => tool.name === 'build_creative')!
    expect(build.inputSchema.properties).toHaveProperty('context')
    expect(build.inputSchema.required).toContain('idempotency_key')
  })

  it('answers a public task without credentials, with structuredContent and the same JSON text, context echoed', async () => {
    const context = { correlation_id: 'c-1', nested: { a: [1, 2] } }
    const result = await call(undefined, 'get_adcp_capabilities', { context, adcp_major_version: 3 })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({
      adcp_version: '3.1',
      adcp: { major_versions: [3] },
      supported_protocols: ['creative'],
      context,
    })
    expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent)
  })

  it('gives a public task the principal when credentials are sent', async () => {
    const result = await call(BUYER_TOKEN, 'list_creative_formats', {})
    expect(result.structuredContent).toMatchObject({ formats: [{ name: 'display_300x250 (for buyer-1)' }] })
  })

  it('runs a protected task with a bearer token holding the permission', async () => {
    const result = await call(BUYER_TOKEN, 'build_creative', {
      idempotency_key: key(),
      target_format_id: format,
      context: { correlation_id: 'x' },
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({
      creative_manifest: { format_id: format },
      context: { correlation_id: 'x' },
    })
    expect(result.structuredContent).not.toHaveProperty('replayed')
  })

  const errorCases: [string, string | undefined, string, Record<string, unknown>, Record<string, unknown>][] =
    [
      [
        'an unknown field on a strict schema',
        undefined,
        'get_adcp_capabilities',
        { surprise: 1 },
        { code: 'INVALID_REQUEST' },
      ],
      [
        'a wrong type',
        undefined,
        'list_creative_formats',
        { max_results: 'ten' },
        { code: 'INVALID_REQUEST', field: 'max_results' },
      ],
      [
        'a bare-string format_id in a list',
        undefined,
        'list_creative_formats',
        { format_ids: ['display_300x250'] },
        { code: 'INVALID_FORMAT_ID', field: 'format_ids[0]' },
      ],
      [
        'a bare-string target_format_id',
        BUYER_TOKEN,
        'build_creative',
        { idempotency_key: key(), target_format_id: 'display_300x250' },
        { code: 'INVALID_FORMAT_ID', field: 'target_format_id' },
      ],
      [
        'a missing idempotency_key',
        BUYER_TOKEN,
        'build_creative',
        { target_format_id: format },
        { code: 'INVALID_REQUEST', field: 'idempotency_key' },
      ],
      [
        'a malformed idempotency_key',
        BUYER_TOKEN,
        'build_creative',
        { idempotency_key: 'short', target_format_id: format },
        { code: 'INVALID_REQUEST', field: 'idempotency_key' },
      ],
      [
        'a context that is not an object',
        undefined,
        'get_adcp_capabilities',
        { context: 'x' },
        { code: 'INVALID_REQUEST', field: 'context' },
      ],
      [
        'a push registration without operation_id',
        BUYER_TOKEN,
        'build_creative',
        {
          idempotency_key: key(),
          target_format_id: format,
          push_notification_config: { url: 'https://buyer.example/hook' },
        },
        { code: 'INVALID_REQUEST', field: 'push_notification_config.operation_id' },
      ],
      [
        'a handler error',
        BUYER_TOKEN,
        'build_creative',
        { idempotency_key: key(), target_format_id: { ...format, id: 'unknown' } },
        { code: 'FORMAT_NOT_SUPPORTED', field: 'target_format_id', recovery: 'correctable' },
      ],
      [
        'a handler crash',
        BUYER_TOKEN,
        'build_creative',
        { idempotency_key: key(), target_format_id: format, message: 'crash' },
        { code: 'INTERNAL_ERROR', message: 'the task failed unexpectedly' },
      ],
      ['an unknown tool', undefined, 'no_such_tool', {}, { code: 'INVALID_REQUEST' }],
    ]

  it.each(errorCases)(
    'answers %s with isError and the AdCP error',
    async (_name, token, tool, args, expected) => {
      const result = await call(token, tool, { context: { correlation_id: 'err' }, ...args })
      expect(result.isError).toBe(true)
      expect(result.structuredContent?.adcp_error).toMatchObject(expected)
      // The two-layer model: the same error object in the payload errors[], and the envelope status.
      expect(result.structuredContent?.errors).toEqual([result.structuredContent?.adcp_error])
      expect(result.structuredContent?.status).toBe('failed')
      if (args.context === undefined)
        expect(result.structuredContent?.context).toEqual({ correlation_id: 'err' })
      expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent)
    },
  )

  it('answers a raw JSON-RPC POST that accepts only JSON, and still refuses one that accepts neither', async () => {
    const post = (accept: string) =>
      fetch(`${agent.origin}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${BUYER_TOKEN}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'get_adcp_capabilities', arguments: { context: { id: 'raw' } } },
        }),
      })
    const answer = await post('application/json')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toContain('application/json')
    const body = (await answer.json()) as { id: number; result: ToolResult }
    expect(body.id).toBe(7)
    expect(body.result.isError).toBeFalsy()
    expect(body.result.structuredContent?.context).toEqual({ id: 'raw' })
    expect((await post('text/html')).status).toBe(406)
  })
})

describe('MCP transport methods', () => {
  it('answers GET and DELETE on /mcp with 405 and Allow: POST, never 200 with an empty body', async () => {
    const cases: [string, Record<string, string>][] = [
      ['GET', {}],
      ['GET', { accept: 'text/event-stream' }],
      ['GET', { accept: 'application/json, text/event-stream', authorization: `Bearer ${BUYER_TOKEN}` }],
      ['DELETE', { 'mcp-session-id': 'none' }],
      ['PUT', {}],
    ]
    for (const [method, headers] of cases) {
      const response = await fetch(`${agent.origin}/mcp`, { method, headers })
      expect([method, response.status, response.headers.get('allow')]).toEqual([method, 405, 'POST'])
      expect(await response.text()).toBe('')
    }
  })

  // Each new client compiles every tool's output schema on listTools: seconds in all on a busy machine.
  it(
    'the official client connects, lists tools and calls a tool, 50 times in a row',
    { timeout: 120_000 },
    async () => {
      for (let round = 0; round < 50; round += 1) {
        const client = await connect()
        try {
          const { tools } = await client.listTools()
          expect(tools.map((tool) => tool.name)).toContain('get_adcp_capabilities')
          const result = (await client.callTool({
            name: 'get_adcp_capabilities',
            arguments: { context: { correlation_id: `round-${round}` }, adcp_major_version: 3 },
          })) as ToolResult
          expect(result.isError).toBeFalsy()
          expect(result.structuredContent?.context).toEqual({ correlation_id: `round-${round}` })
        } finally {
          await client.close()
        }
      }
    },
  )
})
