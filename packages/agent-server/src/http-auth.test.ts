/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { MemoryClaimStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import { a2aSendRequest } from '@adwire/agent-client'
import {
  BUYER_TOKEN,
  READER_TOKEN,
  executions,
  startAgent,
  tokens,
  type RunningAgent,
} from './testing/support.js'

let agent: RunningAgent

beforeAll(async () => {
  agent = await startAgent({
    auth: { tokens, resourceMetadataUrl: 'https://agent.example/.well-known/oauth-protected-resource' },
    idempotency: { store: new MemoryClaimStore() },
  })
})
afterAll(() => agent.close())

const format = { agent_url: 'https://agent.example', id: 'display_300x250' }
const buildArgs = (message: string) => ({
  idempotency_key: `key_${crypto.randomUUID()}`,
  target_format_id: format,
  message,
})

/** A raw MCP tools/call, as a client without the SDK sends it. */
function mcpCall(name: string, args: Record<string, unknown>, token?: string) {
  return fetch(`${agent.origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
  })
}

function a2aCall(skill: string, input: Record<string, unknown>, token?: string) {
  const { headers, body } = a2aSendRequest({ skill, input })
  return fetch(`${agent.origin}/a2a`, {
    method: 'POST',
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })
}

describe('auth at the HTTP layer', () => {
  it.each([
    ['mcp', mcpCall],
    ['a2a', a2aCall],
  ] as const)(
    'answers 401 with WWW-Authenticate on %s before the task runs, without and with a rejected token',
    async (transport, call) => {
      for (const [token, code, error] of [
        [undefined, 'AUTH_MISSING', ''],
        ['not-a-real-token-0123456789', 'AUTH_INVALID', ', error="invalid_token"'],
      ] as const) {
        const message = `refused-${transport}-${code}`
        const response = await call('build_creative', buildArgs(message), token)
        expect(response.status).toBe(401)
        expect(response.headers.get('www-authenticate')).toBe(
          `Bearer realm="${agent.origin}/${transport}"${error}, resource_metadata="https://agent.example/.well-known/oauth-protected-resource"`,
        )
        const body = (await response.json()) as any
        expect(body.id).toBe(transport === 'mcp' ? 7 : 1)
        expect(body.error.data.adcp_error).toMatchObject({ code })
        expect(executions.get(message)).toBeUndefined()
      }
    },
  )

  it.each([
    ['mcp', mcpCall],
    ['a2a', a2aCall],
  ] as const)(
    'answers 403 INSUFFICIENT_PERMISSIONS on %s to a principal without the permission',
    async (transport, call) => {
      const message = `forbidden-${transport}`
      const response = await call('build_creative', buildArgs(message), READER_TOKEN)
      expect(response.status).toBe(403)
      const body = (await response.json()) as any
      expect(body.error.data.adcp_error).toMatchObject({
        code: 'INSUFFICIENT_PERMISSIONS',
        details: { resource: 'creatives', permission: 'write' },
      })
      expect(executions.get(message)).toBeUndefined()
    },
  )

  it('lets a protected call with the permission through', async () => {
    const response = await mcpCall('build_creative', buildArgs('allowed'), BUYER_TOKEN)
    expect(response.status).toBe(200)
    expect(executions.get('allowed')).toBe(1)
  })

  it('serves public tasks without a header, and with a present but unknown token', async () => {
    for (const token of [undefined, 'placeholder-token-0123456789']) {
      const mcp = await mcpCall('list_creative_formats', {}, token)
      expect(mcp.status).toBe(200)
      expect(((await mcp.json()) as any).result.structuredContent.formats).toHaveLength(1)
      const a2a = await a2aCall('list_creative_formats', {}, token)
      expect(a2a.status).toBe(200)
      expect(((await a2a.json()) as any).result.task.status.state).toBe('TASK_STATE_COMPLETED')
    }
  })

  it('with auth.refuseInvalidOnPublicTasks, refuses an unknown token on a public task with 401 AUTH_INVALID', async () => {
    const strict = await startAgent({ auth: { tokens, refuseInvalidOnPublicTasks: true } })
    try {
      const args = {}
      const calls = [
        [
          'mcp',
          () =>
            fetch(`${strict.origin}/mcp`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                authorization: 'Bearer placeholder-token-0123456789',
              },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 7,
                method: 'tools/call',
                params: { name: 'list_creative_formats', arguments: args },
              }),
            }),
        ],
        [
          'a2a',
          () => {
            const { headers, body } = a2aSendRequest({ skill: 'list_creative_formats', input: args })
            return fetch(`${strict.origin}/a2a`, {
              method: 'POST',
              headers: { ...headers, authorization: 'Bearer placeholder-token-0123456789' },
              body: JSON.stringify(body),
            })
          },
        ],
      ] as const
      for (const [transport, call] of calls) {
        const response = await call()
        expect(response.status).toBe(401)
        expect(response.headers.get('www-authenticate')).toBe(
          `Bearer realm="${strict.origin}/${transport}", error="invalid_token"`,
        )
        expect(((await response.json()) as any).error.data.adcp_error.code).toBe('AUTH_INVALID')
      }
    } finally {
      await strict.close()
    }
  })

  it('lists every tool to an unauthenticated MCP client, and every skill on the card', async () => {
    const client = new Client({ name: 'anonymous', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`)))
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([
        'get_adcp_capabilities',
        'list_creative_formats',
        'build_creative',
      ])
    } finally {
      await client.close()
    }
    const card = (await (await fetch(`${agent.origin}/.well-known/agent-card.json`)).json()) as any
    expect(card.skills.map((skill: any) => skill.id)).toEqual([
      'get_adcp_capabilities',
      'list_creative_formats',
      'build_creative',
    ])
  })

  it('declares the bearer scheme on the card, per skill, in the 0.3 and the 1.0 shapes', async () => {
    const card = (await (await fetch(`${agent.origin}/a2a/.well-known/agent-card.json`)).json()) as any
    expect(card.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      httpAuthSecurityScheme: { scheme: 'Bearer' },
    })
    expect(card.security).toEqual([{ bearer: [] }])
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }])
    const skill = (id: string) => card.skills.find((entry: any) => entry.id === id)
    expect(skill('build_creative').security).toEqual([{ bearer: [] }])
    expect(skill('list_creative_formats').security).toEqual([{}])
    expect(skill('list_creative_formats').securityRequirements).toEqual([{ schemes: {} }])
    expect(card.capabilities.extensions[0].uri).toBe(ADCP_A2A_EXTENSION)
  })
})
