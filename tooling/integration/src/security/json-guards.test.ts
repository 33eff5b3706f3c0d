/**
 * Deep JSON and lone surrogates in every service, refused by the one request guard of the service kit before
 * any route parses them: JSON nested beyond HTTP_MAX_JSON_DEPTH (64 by default) is a 400, a lone UTF-16
 * surrogate anywhere in a request is a 400 (a validation error on the agents). Before: the registry answered
 * 500 to a 13.7 KB body nested 7,000 levels, the agents `-32603 Maximum call stack size exceeded`, and a lone
 * surrogate was `INTERNAL_ERROR` (in `context`, the buy was accepted and its webhooks dropped). And agent calls
 * whose `arguments` are not an object are `INVALID_REQUEST` over MCP and A2A.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, TOKEN, postJson, startService, type App, type ServiceProcess } from './services.js'

/** `levels` nested arrays around a number: 7,000 levels are 14 KB. */
const deep = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`
const LONE = '\\ud800'

const auth = { authorization: `Bearer ${TOKEN}` }

describe('registry', () => {
  let service: ServiceProcess
  beforeAll(async () => void (service = await startService('registry')), 60_000)
  afterAll(() => service?.stop())

  it('answers 400 json_too_deep to a body nested 7,000 levels (13.7 KB), not 500', async () => {
    const body = `{"domains":${deep(7_000)}}`
    expect(body.length).toBeLessThan(14_100)
    const answer = await postJson(`${service.url}/api/brands/resolve/bulk`, body)
    expect(answer).toMatchObject({ status: 400, json: { error: 'json_too_deep' } })
  })

  it('still takes a body nested within the limit', async () => {
    const answer = await postJson(`${service.url}/api/brands/resolve/bulk`, '{"domains":["acme.example"]}')
    expect(answer.status).toBe(200)
  })

  it('answers 400 lone_surrogate to a lone surrogate in a value or a key', async () => {
    for (const body of [`{"domains":["a${LONE}.example"]}`, `{"domains":[],"x${LONE}":1}`]) {
      const answer = await postJson(`${service.url}/api/brands/resolve/bulk`, body)
      expect(answer).toMatchObject({ status: 400, json: { error: 'lone_surrogate' } })
    }
  })
})

describe('receiver', () => {
  let service: ServiceProcess
  beforeAll(async () => void (service = await startService('receiver')), 60_000)
  afterAll(() => service?.stop())

  it('answers 400 to deep JSON and lone surrogates in its API, in its error shape', async () => {
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` }
    const tooDeep = await postJson(`${service.url}/api/registrations`, `{"label":${deep(7_000)}}`, headers)
    expect(tooDeep).toMatchObject({ status: 400, json: { error: { code: 'json_too_deep' } } })
    const lone = await postJson(
      `${service.url}/api/registrations`,
      `{"auth":"hmac","label":"a${LONE}"}`,
      headers,
    )
    expect(lone).toMatchObject({ status: 400, json: { error: { code: 'lone_surrogate' } } })
  })
})

const TOOLS: Record<'creative-agent' | 'sales-agent', string> = {
  'creative-agent': 'list_creative_formats',
  'sales-agent': 'get_products',
}

const mcpCall = (name: string, args: string) =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`
const a2aCall = (skill: string, input: string) =>
  `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"data","data":{"skill":"${skill}","input":${input}}}]}}}`

/** The AdCP error code of an agent's answer: in the JSON-RPC error, or in the failed task / tool result. */
function adcpCode(json: unknown): string | undefined {
  const text = JSON.stringify(json)
  return /"adcp_error":\{"code":"([A-Z_]+)"/.exec(text)?.[1]
}

describe.each(Object.keys(TOOLS) as (keyof typeof TOOLS)[])('%s over MCP and A2A', (app: App) => {
  let service: ServiceProcess
  const tool = TOOLS[app as keyof typeof TOOLS]
  beforeAll(async () => void (service = await startService(app)), 60_000)
  afterAll(() => service?.stop())

  it('answers 400 INVALID_REQUEST to arguments nested 7,000 levels, not -32603', async () => {
    for (const [path, body] of [
      ['/mcp', mcpCall(tool, `{"brief":${deep(7_000)}}`)],
      ['/a2a', a2aCall(tool, `{"brief":${deep(7_000)}}`)],
    ] as const) {
      const answer = await postJson(`${service.url}${path}`, body, auth)
      expect({ path, status: answer.status, code: adcpCode(answer.json) }).toEqual({
        path,
        status: 400,
        code: 'INVALID_REQUEST',
      })
      expect(JSON.stringify(answer.json)).not.toContain('Maximum call stack')
    }
  })

  it('answers a lone surrogate anywhere (arguments, context) with VALIDATION_ERROR, not INTERNAL_ERROR', async () => {
    for (const [path, body] of [
      ['/mcp', mcpCall(tool, `{"brief":"a${LONE}"}`)],
      ['/mcp', mcpCall(tool, `{"context":{"note":"${LONE}x"}}`)],
      ['/a2a', a2aCall(tool, `{"context":{"note":"${LONE}"}}`)],
    ] as const) {
      const answer = await postJson(`${service.url}${path}`, body, auth)
      expect({ path, status: answer.status, code: adcpCode(answer.json) }).toEqual({
        path,
        status: 400,
        code: 'VALIDATION_ERROR',
      })
    }
  })

  it('answers INVALID_REQUEST to arguments that are not an object', async () => {
    for (const [path, body] of [
      ['/mcp', mcpCall(tool, '"x"')],
      ['/mcp', mcpCall(tool, '[1,2]')],
      ['/mcp', mcpCall(tool, '42')],
      ['/a2a', a2aCall(tool, '"x"')],
      ['/a2a', a2aCall(tool, '[1]')],
    ] as const) {
      const answer = await postJson(`${service.url}${path}`, body, auth)
      expect({ path, body, code: adcpCode(answer.json) }).toEqual({ path, body, code: 'INVALID_REQUEST' })
    }
  })

  it('still answers a well-formed call with a surrogate pair', async () => {
    const answer = await postJson(
      `${service.url}/mcp`,
      mcpCall(tool, '{"context":{"note":"\\ud83d\\ude00"}}'),
      auth,
    )
    expect(answer.status).toBe(200)
    expect(adcpCode(answer.json)).not.toBe('VALIDATION_ERROR')
  })
})
