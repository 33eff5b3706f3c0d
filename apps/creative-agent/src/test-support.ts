/**
 * Helpers for this app's service tests (not part of the build): the agent on a temporary SQLite file listening
 * on 127.0.0.1 port 0, calls through the official MCP client and the A2A client, and the official-schema check.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON answers freely */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client'
import { ADCP_A2A_EXTENSION } from '@adwire/agent-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { expect } from 'vitest'
import { parseEnv } from './env.js'
import { startCreativeAgent, type RunningCreativeAgent, type StartOptions } from './service.js'
import { officialErrors } from '@adwire/conformance/official'

/** A parsed JSON answer. */
export type Body = any

export const BUYER_TOKEN = 'buyer-token-for-creative-tests-0123456789'
export const READER_TOKEN = 'reader-token-for-creative-tests-0123456789'
export const TOKENS = `buyer-1:${BUYER_TOKEN}:read+write,reader-1:${READER_TOKEN}:read`

export const tempDir = (prefix = 'adwire-creative-') => mkdtempSync(join(tmpdir(), prefix))

/** The agent on 127.0.0.1, port 0, a fresh SQLite file, the test tokens, local webhooks allowed. */
export async function startTestAgent(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningCreativeAgent> {
  return startCreativeAgent(
    parseEnv({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(tempDir(), 'creative-agent.sqlite')}`,
      TOKENS,
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      ...env,
    }),
    { senderPollMs: 25, ...options },
  )
}

/** Asserts `value` is valid against the official 3.1.19 schema file. */
export function expectOfficial(file: string, value: unknown): void {
  expect(officialErrors(file, value), `${file}: ${JSON.stringify(value).slice(0, 400)}`).toEqual([])
}

export interface ToolResult {
  readonly structuredContent?: Body
  readonly content: { type: string; text?: string }[]
  readonly isError?: boolean
}

/** A connected official MCP client (close it). */
export async function mcpClient(agent: { url: string }, token?: string): Promise<Client> {
  const client = new Client({ name: 'creative-agent-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    }),
  )
  return client
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
    return fetch(input, { ...init, headers })
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

/** A format_id of `agent`'s catalog. */
export const fid = (agent: { publicUrl: string }, id: string) => ({ agent_url: agent.publicUrl, id })

/** A generation brief for `target` (promoted_offerings with brand colours and one offering). */
export function brief(agent: { publicUrl: string }, target = 'display_300x250_image'): Body {
  return {
    target_format_id: fid(agent, target),
    creative_manifest: {
      format_id: fid(agent, target),
      assets: {
        promoted_offerings: {
          brand_manifest: {
            name: 'Acme Coffee',
            url: 'https://acme.example/',
            colors: { primary: '#6B3E26', secondary: '#F2C14E' },
          },
          inline_offerings: [
            { name: 'Cold Brew Spring Sale', description: 'Two for one on every cold brew until May.' },
          ],
        },
      },
    },
  }
}

/** Waits until `condition` holds (polling every 20 ms), or fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
