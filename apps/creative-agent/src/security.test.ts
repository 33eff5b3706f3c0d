/**
 * A wrong bearer is never an anonymous call (issue 22): an unknown token on a public task (list_creative_formats,
 * preview_creative, get_adcp_capabilities) is 401 AUTH_INVALID with WWW-Authenticate over MCP (official client
 * and a raw POST) and A2A (raw JSON-RPC POST), before any task code runs; without a header the public tasks
 * still serve anyone, and a known token is served as its principal.
 */
import { a2aSendRequest } from '@adwire/agent-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import {
  READER_TOKEN,
  a2aSend,
  artifactData,
  expectOfficial,
  fid,
  mcpFails,
  mcpOk,
  startTestAgent,
  type Body,
} from './test-support.js'

const UNKNOWN = 'nobody-issued-this-token-0123456789'
const LIST = 'creative/list-creative-formats-response.json'

let agent: RunningCreativeAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const listArgs = () => ({ format_ids: [fid(agent, 'audio_30s')] })

/** The refusal of a raw POST: 401, an `invalid_token` challenge for `endpoint`, AUTH_INVALID for `id`. */
async function expectInvalid(response: Response, endpoint: 'mcp' | 'a2a', id: string | number) {
  expect(response.status).toBe(401)
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer realm="${agent.publicUrl}/${endpoint}", error="invalid_token"`,
  )
  const body = (await response.json()) as Body
  expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32028 } })
  expectOfficial('core/error.json', body.error.data.adcp_error)
  expect(body.error.data.adcp_error.code).toBe('AUTH_INVALID')
}

describe('an unknown bearer on a public task', () => {
  it('is refused over MCP through the official client, on every public tool', async () => {
    await mcpFails(agent, UNKNOWN, 'list_creative_formats', listArgs(), 'AUTH_INVALID')
    await mcpFails(agent, UNKNOWN, 'get_adcp_capabilities', {}, 'AUTH_INVALID')
    await mcpFails(
      agent,
      UNKNOWN,
      'preview_creative',
      { request_type: 'single', format_id: fid(agent, 'audio_30s'), creative_manifest: {} },
      'AUTH_INVALID',
    )
  })

  it('is 401 AUTH_INVALID with WWW-Authenticate on a raw MCP POST', async () => {
    const response = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${UNKNOWN}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'list_creative_formats', arguments: listArgs() },
      }),
    })
    await expectInvalid(response, 'mcp', 7)
  })

  it('is 401 AUTH_INVALID with WWW-Authenticate on a raw A2A JSON-RPC POST', async () => {
    const { headers, body } = a2aSendRequest({
      skill: 'list_creative_formats',
      input: listArgs(),
      id: 'a2a-unknown',
    })
    const response = await fetch(`${agent.url}/a2a`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${UNKNOWN}` },
      body: JSON.stringify(body),
    })
    await expectInvalid(response, 'a2a', 'a2a-unknown')
  })
})

describe('without a header, or with a known token', () => {
  it('the public tasks serve anyone over MCP and A2A', async () => {
    for (const token of [undefined, READER_TOKEN]) {
      const listed = await mcpOk(agent, token, 'list_creative_formats', listArgs(), LIST)
      expect(listed.formats.map((format: Body) => format.format_id.id)).toEqual(['audio_30s'])
      const task = await a2aSend(agent, token, 'list_creative_formats', listArgs())
      const data = artifactData(task)
      expectOfficial(LIST, data)
      expect(data.formats.map((format: Body) => format.format_id.id)).toEqual(['audio_30s'])
    }
  })
})
