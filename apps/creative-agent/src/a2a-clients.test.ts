/**
 * The creative agent through the official A2A SDK client in 1.0 and 0.3 mode, both given the `/a2a` endpoint
 * URL: the card found next to it, valid for both, and 0.3 input in `parameters`.
 */
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client as A2AClient,
} from '@a2a-js/sdk/client'
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client'
import { ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import { expectOfficial, fid, startTestAgent, type Body } from './test-support.js'

let agent: RunningCreativeAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})

async function send(client: A2AClient, value: Body): Promise<Task> {
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [dataPart(value)],
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

const artifactData = (task: Task): Body => task.artifacts[0]?.parts[0]?.content?.value

describe('A2A clients given the /a2a URL', () => {
  it('finds the card next to the endpoint, and a 1.0 client uses it', async () => {
    for (const base of [`${agent.url}/a2a`, `${agent.url}/a2a/`]) {
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory()],
        }),
      )
      const client = await factory.createFromUrl(base)
      expect(client.protocolVersion).toBe('1.0')
      const task = await send(client, { skill: 'get_adcp_capabilities', input: {} })
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
      expectOfficial('protocol/get-adcp-capabilities-response.json', artifactData(task))
    }
    const card = (await (await fetch(`${agent.url}/a2a/.well-known/agent-card.json`)).json()) as Body
    expect(card).toMatchObject({
      url: `${agent.publicUrl}/a2a`,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      additionalInterfaces: [{ url: `${agent.publicUrl}/a2a`, transport: 'JSONRPC' }],
      supportedInterfaces: [
        { url: `${agent.publicUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${agent.publicUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
    })
  })

  it('serves a 0.3 client that reads only the 0.3 fields, with input in `parameters`', async () => {
    const card = (await (await fetch(`${agent.url}/a2a/.well-known/agent-card.json`)).json()) as Body
    // What a 0.3 client knows of the card: no supportedInterfaces, no securityRequirements.
    const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacyView } = card
    expect(parseLegacyAgentCard(legacyView).supportedInterfaces[0]).toMatchObject({
      url: `${agent.publicUrl}/a2a`,
      protocolBinding: 'JSONRPC',
    })
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
        cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      }),
    )
    const client = await factory.createFromAgentCard(legacyView as never)
    expect(client.protocolVersion).toMatch(/^0\.3/)
    const listed = await send(client, {
      skill: 'list_creative_formats',
      parameters: { format_ids: [fid(agent, 'audio_30s')], context: { correlation_id: 'v03' } },
    })
    expect(listed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(artifactData(listed).formats.map((format: Body) => format.format_id.id)).toEqual(['audio_30s'])
    expect(artifactData(listed).context).toEqual({ correlation_id: 'v03' })
    // `input` wins when both are present.
    const both = await send(client, {
      skill: 'list_creative_formats',
      input: { format_ids: [fid(agent, 'display_300x250_image')] },
      parameters: { format_ids: [fid(agent, 'audio_30s')] },
    })
    expect(artifactData(both).formats.map((format: Body) => format.format_id.id)).toEqual([
      'display_300x250_image',
    ])
  })
})

// Last: compiling and checking every example holds the event loop for seconds (the agent's too), after which
// pooled keep-alive sockets of the clients above may be closed under them.
