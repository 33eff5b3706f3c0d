/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client,
} from '@a2a-js/sdk/client'
import { a2aSendRequest } from '@adwire/agent-client'
import { MemoryClaimStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import { BUYER_TOKEN, startAgent, tokens, type RunningAgent } from './testing/support.js'

let agent: RunningAgent

beforeAll(async () => {
  agent = await startAgent({ auth: { tokens }, idempotency: { store: new MemoryClaimStore() } })
})
afterAll(() => agent.close())

async function connect(token?: string): Promise<Client> {
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
  return factory.createFromUrl(agent.origin)
}

const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
})
const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
})

async function send(token: string | undefined, parts: Part[]): Promise<Task> {
  const client = await connect(token)
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts,
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    },
    { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
  )
  expect('status' in result).toBe(true)
  return result as Task
}

const artifactData = (task: Task) => task.artifacts[0]?.parts[0]?.content?.value as Record<string, unknown>
const format = { agent_url: 'https://agent.example', id: 'display_300x250' }

describe('A2A', () => {
  it('serves the agent card at both well-known paths, skills = tasks, AdCP extension advertised', async () => {
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
      const card = (await (await fetch(`${agent.origin}${path}`)).json()) as Record<string, any>
      expect(card.skills.map((skill: { id: string }) => skill.id)).toEqual([
        'get_adcp_capabilities',
        'list_creative_formats',
        'build_creative',
      ])
      expect(card.capabilities.extensions).toEqual([
        { uri: ADCP_A2A_EXTENSION, description: 'AdCP structured task invocation profile', required: false },
      ])
      expect(card.supportedInterfaces[0]).toMatchObject({
        url: `${agent.origin}/a2a`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      })
    }
  })

  it('completes a public skill with the AdCP response in the artifact DataPart, context echoed', async () => {
    const task = await send(undefined, [
      text('what can you do?'),
      data({ skill: 'get_adcp_capabilities', input: { context: { correlation_id: 'a2a-1' } } }),
    ])
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(artifactData(task)).toEqual({
      adcp_version: '3.1',
      adcp: { major_versions: [3] },
      supported_protocols: ['creative'],
      context: { correlation_id: 'a2a-1' },
    })
  })

  it('runs a protected skill with a bearer token and replays it by idempotency_key', async () => {
    const input = {
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: format,
      message: 'a2a-replay',
    }
    const first = await send(BUYER_TOKEN, [data({ skill: 'build_creative', input })])
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(artifactData(first)).toMatchObject({ creative_manifest: { format_id: format } })
    const second = await send(BUYER_TOKEN, [data({ skill: 'build_creative', input })])
    expect(artifactData(second)).toEqual({ ...artifactData(first), replayed: true })
  })

  const failures: [string, string | undefined, Part[], Record<string, unknown>][] = [
    [
      'a bare-string format_id',
      undefined,
      [data({ skill: 'list_creative_formats', input: { format_ids: ['display_300x250'] } })],
      { code: 'INVALID_FORMAT_ID', field: 'format_ids[0]' },
    ],
    [
      '`parameters` instead of `input` on the activated 1.0 profile',
      undefined,
      [data({ skill: 'get_adcp_capabilities', parameters: {} })],
      { code: 'INVALID_REQUEST', field: 'parameters' },
    ],
    [
      'two DataParts',
      undefined,
      [
        data({ skill: 'get_adcp_capabilities', input: {} }),
        data({ skill: 'get_adcp_capabilities', input: {} }),
      ],
      { code: 'INVALID_REQUEST' },
    ],
    [
      'an unknown skill',
      undefined,
      [data({ skill: 'nope', input: {} })],
      { code: 'INVALID_REQUEST', field: 'skill' },
    ],
  ]

  it.each(failures)(
    'fails the task on %s with an adcp_error DataPart',
    async (_name, token, parts, expected) => {
      const task = await send(token, parts)
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED)
      expect(artifactData(task).adcp_error).toMatchObject(expected)
      expect(artifactData(task).errors).toEqual([artifactData(task).adcp_error])
      expect(artifactData(task).status).toBe('failed')
      expect(task.status?.message?.parts[0]?.content?.value).toEqual(artifactData(task))
    },
  )

  it('accepts `parameters` off the activated profile (a 0.3 request), by default', async () => {
    const legacy = await startAgent({})
    try {
      const response = await fetch(`${legacy.origin}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '0.3' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: 'm1',
              role: 'user',
              parts: [{ kind: 'data', data: { skill: 'get_adcp_capabilities', parameters: {} } }],
            },
          },
        }),
      })
      const body = (await response.json()) as {
        result: { kind: string; status: { state: string }; artifacts: { parts: { data: unknown }[] }[] }
      }
      expect(body.result.status.state).toBe('completed')
      expect(body.result.artifacts[0]!.parts[0]!.data).toEqual({
        adcp_version: '3.1',
        adcp: { major_versions: [3] },
        supported_protocols: ['creative'],
      })
    } finally {
      await legacy.close()
    }
  })

  it('rejects requests without the AdCP extension when it is required, and echoes it when activated', async () => {
    const strict = await startAgent({ a2a: { requireExtension: true } })
    try {
      const body = (extension?: string) => ({
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          ...(extension ? { 'a2a-extensions': extension } : {}),
        },
        // the builder's body, sent without its headers: the extension is activated (or not) by hand
        body: JSON.stringify(a2aSendRequest({ skill: 'get_adcp_capabilities', input: {} }).body),
      })
      const rejected = (await (await fetch(`${strict.origin}/a2a`, body())).json()) as {
        error?: { code: number }
      }
      expect(rejected.error).toBeDefined()
      const accepted = await fetch(`${strict.origin}/a2a`, body(ADCP_A2A_EXTENSION))
      expect(accepted.headers.get('a2a-extensions')).toBe(ADCP_A2A_EXTENSION)
      const json = (await accepted.json()) as { result?: { task?: { status: { state: string } } } }
      expect(json.result?.task?.status.state).toBe('TASK_STATE_COMPLETED')
    } finally {
      await strict.close()
    }
  })
})
