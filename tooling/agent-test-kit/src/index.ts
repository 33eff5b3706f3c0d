/**
 * What the agent apps' tests share: calls through the official MCP client (streamable HTTP) and the official A2A
 * client (JSON-RPC, the AdCP extension activated), each answer checked against the official 3.1.19 schemas of
 * `@adwire/conformance`. Each app keeps its own start-up and fixtures in its `src/test-support.ts`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON answers freely */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client'
import { ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { officialErrors } from '@adwire/conformance/official'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** A parsed JSON answer. */
export type Body = any

/** Asserts `value` is valid against the official 3.1.19 schema file. */
export function expectOfficial(file: string, value: unknown): void {
  expect(officialErrors(file, value), `${file}: ${JSON.stringify(value).slice(0, 400)}`).toEqual([])
}

export interface ToolResult {
  readonly structuredContent?: Body
  readonly content: { type: string; text?: string }[]
  readonly isError?: boolean
}

/**
 * fetch, sending a request a second time when the pooled keep-alive socket it went out on had been closed
 * by the server before any answer (undici `UND_ERR_SOCKET`, `ECONNRESET`). The tests' clients and agents
 * share one event loop: while the official MCP client compiles a large tool list's schemas (seconds under
 * load) the server's keep-alive timer runs out, and fires only after the client has reused the socket.
 * Only requests whose body can be sent again (none, or a string) are retried.
 */
export const sameLoopFetch: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, init)
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code
    const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string'
    if (!resendable || (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET')) throw error
    return fetch(input, init)
  }
}

/** A connected official MCP client (close it). */
export async function mcpClient(agent: { url: string }, token?: string): Promise<Client> {
  const client = new Client({ name: 'adwire-agent-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
      fetch: sameLoopFetch,
    }),
  )
  return client
}

/** One MCP call that must succeed and validate against the official response schema; the response. */
export async function mcpOk(
  agent: { url: string },
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
  schema: string,
): Promise<Body> {
  const result = await mcpCall(agent, token, name, args)
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy()
  expectOfficial(schema, result.structuredContent)
  return result.structuredContent
}

/** The HTTP status agent-server answers an auth refusal with (before any task code runs). */
const HTTP_REFUSALS: Record<string, number> = {
  AUTH_MISSING: 401,
  AUTH_INVALID: 401,
  INSUFFICIENT_PERMISSIONS: 403,
}

/**
 * One MCP call that must fail with `code`; the adcp_error. A protected task's auth refusal comes at the HTTP
 * layer (401 or 403 with a JSON-RPC error whose `data.adcp_error` is the error, checked here); every other
 * failure, a public task's own credential check included, as an `isError` tool result.
 */
export async function mcpFails(
  agent: { url: string },
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<Body> {
  const client = await mcpClient(agent, token)
  let error: Body
  try {
    const result = await client.callTool({ name, arguments: args }).then(
      (answer) => answer as ToolResult,
      (failure: unknown) => failure,
    )
    error = result instanceof Error ? refusalError(result, code) : mcpError(result as ToolResult)
  } finally {
    await client.close()
  }
  expect(error.code, JSON.stringify(error)).toBe(code)
  return error
}

/** The adcp_error of an HTTP-layer refusal, whose status must be the one agent-server gives `code`. */
function refusalError(failure: Error, code: string): Body {
  expect(failure, failure.message).toBeInstanceOf(StreamableHTTPError)
  expect((failure as StreamableHTTPError).code, failure.message).toBe(HTTP_REFUSALS[code])
  const text = failure.message.replace(/^.*?Error POSTing to endpoint: /s, '')
  const error = JSON.parse(text).error.data.adcp_error
  expectOfficial('core/error.json', error)
  return error
}

/** One MCP tool call on a fresh connection; the JSON text always equals structuredContent. */
export async function mcpCall(
  agent: { url: string },
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const client = await mcpClient(agent, token)
  try {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult
    expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent)
    return result
  } finally {
    await client.close()
  }
}

/** The `adcp_error` of a failed MCP call, checked against core/error.json. */
export function mcpError(result: ToolResult): Body {
  expect(result.isError).toBe(true)
  const error = result.structuredContent?.adcp_error
  expectOfficial('core/error.json', error)
  return error
}

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})

/** An A2A client from the agent card (the bearer token, when given, on every request). */
export async function a2aClient(agent: { url: string }, token?: string) {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    if (token) headers.set('authorization', `Bearer ${token}`)
    return sameLoopFetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  )
  return factory.createFromUrl(agent.url)
}

/** Sends one `{skill, input}` DataPart with the AdCP extension activated; resolves with the A2A task. */
export async function a2aSend(
  agent: { url: string },
  token: string | undefined,
  skill: string,
  input: Record<string, unknown>,
  push?: { url: string; token?: string },
): Promise<Task> {
  const client = await a2aClient(agent, token)
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [dataPart({ skill, input })],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: push
        ? {
            acceptedOutputModes: [],
            taskPushNotificationConfig: {
              tenant: '',
              id: 'push-1',
              taskId: '',
              url: push.url,
              token: push.token ?? '',
              authentication: undefined,
            },
            returnImmediately: false,
          }
        : undefined,
      metadata: undefined,
    },
    { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
  )
  expect('status' in result).toBe(true)
  return result as Task
}

/** The AdCP response in the task's artifact DataPart. */
export const artifactData = (task: Task): Body => task.artifacts[0]?.parts[0]?.content?.value

/** A unique idempotency key. */
export const newKey = () => `key_${crypto.randomUUID()}`

/** Waits until `condition` holds (polling every 20 ms), or fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * `/mcp` serves POST only (stateless streamable HTTP): GET, which a client uses to open a server-initiated
 * stream, and DELETE, which ends a session, are 405 with `Allow: POST` over raw HTTP, never a 200 with an empty
 * body; the official MCP client still connects, lists the tools and calls one, many times over. Each agent app
 * runs it against itself.
 *
 * @example
 * describeMcpPostOnly(() => startTestAgent(), BUYER_TOKEN)
 */
export function describeMcpPostOnly(
  start: () => Promise<{ readonly url: string; close(): Promise<void> | void }>,
  token: string,
  rounds = 20,
): void {
  let agent: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    agent = await start()
  })
  afterAll(() => agent.close())

  describe('GET /mcp', () => {
    it('is 405 with Allow: POST, whatever the Accept header and credentials', async () => {
      for (const headers of <Record<string, string>[]>[
        {},
        { accept: 'text/event-stream' },
        { accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      ]) {
        const response = await fetch(`${agent.url}/mcp`, { headers })
        expect([response.status, response.headers.get('allow')]).toEqual([405, 'POST'])
        expect(await response.text()).toBe('')
      }
      const deleted = await fetch(`${agent.url}/mcp`, { method: 'DELETE' })
      expect([deleted.status, deleted.headers.get('allow')]).toEqual([405, 'POST'])
    })

    // Each client compiles every tool's output schema on listTools: a few rounds here, 50 in agent-server.
    it(
      `leaves the official client working: connect, listTools, callTool, ${rounds} times`,
      { timeout: 120_000 },
      async () => {
        for (let round = 0; round < rounds; round += 1) {
          const client = await mcpClient(agent, token)
          try {
            const { tools } = await client.listTools()
            expect(tools.map((tool) => tool.name)).toContain('get_adcp_capabilities')
            const result = await client.callTool({
              name: 'get_adcp_capabilities',
              arguments: { adcp_major_version: 3, context: { correlation_id: `round-${round}` } },
            })
            expect(result.isError).toBeFalsy()
            expect((result.structuredContent as { context?: unknown }).context).toEqual({
              correlation_id: `round-${round}`,
            })
          } finally {
            await client.close()
          }
        }
      },
    )
  })
}
