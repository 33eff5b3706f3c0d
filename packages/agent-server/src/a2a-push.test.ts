/**
 * A2A push registrations end to end: the official A2A client and raw JSON-RPC (1.0 and 0.3) register
 * `configuration.taskPushNotificationConfig` or the earlier 3.x `configuration.pushNotificationConfig`, with or
 * without legacy `authentication`; a receiver from @adwire/webhooks configured per URL (RFC 9421, HMAC-SHA256
 * or Bearer) must verify every delivery, since a receiver answers any other mode `webhook_mode_mismatch`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import type { AddressInfo } from 'node:net'
import { Role, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client as A2AClient,
} from '@a2a-js/sdk/client'
import { generateSigningKey, MemoryReplayStore } from '@adwire/http-signatures'
import {
  createWebhookReceiver,
  createWebhookSender,
  MemoryClaimStore,
  MemoryConvergenceStore,
  MemoryOutboxStore,
  type ReceivedEvent,
  type Registration,
  type WebhookSender,
} from '@adwire/webhooks'
import { serve, type ServerType } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import { a2aResponseData, a2aSendRequest } from '@adwire/agent-client'
import { defineTask } from './define-task.js'
import { BUYER_TOKEN, demoTasks, startAgent, tokens, type RunningAgent } from './testing/support.js'

const HMAC_SECRET = 'hmac-shared-secret-0123456789abcdef'
const BEARER = 'bearer-push-token-0123456789abcdefgh'
const format = { agent_url: 'https://agent.example', id: 'display_300x250' }

/** A read-only async task (Bearer pushes are refused for mutating task types such as build_creative). */
const creativeDelivery = defineTask({
  name: 'get_creative_delivery',
  description: 'Reports creative delivery, later',
  input: z.object({}).strict(),
  output: z.object({ creatives: z.array(z.unknown()) }),
  access: { resource: 'creatives', permission: 'read' },
  handler: (_input, context) => {
    const taskId = `task_${crypto.randomUUID()}`
    setTimeout(() => void context.updates(taskId).update('completed', { creatives: [] }), 20)
    return { status: 'submitted', task_id: taskId } as const
  },
})

let agent: RunningAgent
let sender: WebhookSender
let receiverServer: ServerType
let hooks: string
const events: ReceivedEvent[] = []
/** Every receiver answer other than 200, with its WWW-Authenticate error. */
const refusals: { path: string; status: number; error: string | null }[] = []

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'agent-key-1' })
  const registrations: Record<string, Registration> = {
    '/hooks/rfc': { id: 'rfc', auth: { mode: 'rfc9421', keys: key.jwks }, shape: 'a2a' },
    '/hooks/hmac': { id: 'hmac', auth: { mode: 'hmac', secret: HMAC_SECRET }, shape: 'a2a' },
    '/hooks/bearer': { id: 'bearer', auth: { mode: 'bearer', token: BEARER }, shape: 'a2a' },
    '/hooks/mcp': { id: 'mcp', auth: { mode: 'rfc9421', keys: key.jwks }, shape: 'mcp' },
  }
  const receiver = createWebhookReceiver({
    registration: (request) => registrations[new URL(request.url).pathname],
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    publish: async (event) => void events.push(event),
  })
  receiverServer = await new Promise((resolve) => {
    const started = serve(
      {
        fetch: async (request) => {
          const response = await receiver.handle(request)
          if (response.status !== 200)
            refusals.push({
              path: new URL(request.url).pathname,
              status: response.status,
              error: response.headers.get('www-authenticate'),
            })
          return response
        },
        port: 0,
        hostname: '127.0.0.1',
      },
      () => resolve(started),
    )
  })
  hooks = `http://127.0.0.1:${(receiverServer.address() as AddressInfo).port}/hooks`
  // One delivery at a time: a task's working and completed pushes then arrive in order (the receiver would
  // rightly answer a working push after the completed one `stale` and not publish it).
  sender = createWebhookSender({
    outbox: new MemoryOutboxStore(),
    key: key.privateJwk,
    pollIntervalMs: 20,
    concurrency: 1,
  })
  sender.start()
  agent = await startAgent({
    auth: { tokens },
    idempotency: { store: new MemoryClaimStore() },
    sender,
    tasks: [...demoTasks, creativeDelivery],
  })
})
afterAll(async () => {
  await sender.stop()
  await agent.close()
  await new Promise<void>((resolve) => receiverServer.close(() => resolve()))
})

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now()
  while (!condition()) {
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out waiting for ${what}; receiver refusals: ${JSON.stringify(refusals)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const ofTask = (taskId: string) => events.filter((event) => event.taskId === taskId)

/** Waits for the working and completed pushes of an async build_creative and checks how they were verified. */
async function expectBuildPushes(taskId: string, registrationId: string, sender: string): Promise<void> {
  await until(() => ofTask(taskId).length >= 2, `the pushes of ${taskId}`)
  expect(ofTask(taskId).map((event) => [event.registrationId, event.sender, event.status])).toEqual([
    [registrationId, sender, 'working'],
    [registrationId, sender, 'completed'],
  ])
  expect(ofTask(taskId)[1]!.data).toMatchObject({ creative_manifest: { format_id: format } })
}

const buildInput = () => ({
  idempotency_key: `key_${crypto.randomUUID()}`,
  target_format_id: format,
  message: 'async',
})

/**
 * One JSON-RPC SendMessage (A2A 1.0) or message/send (A2A 0.3) with `configuration` as given: the AdCP data,
 * with `a2a_task_id`, the id of the A2A Task it created (which its A2A pushes name).
 */
async function rpc(
  version: '1.0' | '0.3',
  invocation: { skill: string; input: Record<string, unknown> },
  configuration: Record<string, unknown>,
): Promise<Record<string, any>> {
  const { headers, body } = a2aSendRequest({ ...invocation, version, configuration })
  const response = await fetch(`${agent.origin}/a2a`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${BUYER_TOKEN}` },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as { result?: { task?: { id?: string }; id?: string } }
  return { ...a2aResponseData(json), a2a_task_id: json.result?.task?.id ?? json.result?.id }
}

describe('A2A push registrations', () => {
  it('forwards HMAC-SHA256 authentication from the official A2A client (1.0 `scheme`)', async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({
            fetchImpl: (input, init) => {
              const headers = new Headers(init?.headers)
              headers.set('authorization', `Bearer ${BUYER_TOKEN}`)
              return fetch(input, { ...init, headers })
            },
          }),
        ],
      }),
    )
    const client = await factory.createFromUrl(agent.origin)
    const task = (await client.sendMessage(
      {
        tenant: '',
        message: {
          messageId: crypto.randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'data', value: { skill: 'build_creative', input: buildInput() } },
              metadata: undefined,
              filename: '',
              mediaType: 'application/json',
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: 'push-hmac',
            taskId: '',
            url: `${hooks}/hmac`,
            token: '',
            authentication: { scheme: 'HMAC-SHA256', credentials: HMAC_SECRET },
          },
          returnImmediately: false,
        },
        metadata: undefined,
      },
      { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
    )) as Task
    const answer = task.artifacts[0]?.parts[0]?.content?.value as Record<string, any>
    expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    await expectBuildPushes(task.id, 'hmac', 'hmac:hmac')
  })

  it('forwards the AdCP form `{schemes: ["HMAC-SHA256"], credentials}` sent on the 1.0 wire', async () => {
    const answer = await rpc(
      '1.0',
      { skill: 'build_creative', input: buildInput() },
      {
        taskPushNotificationConfig: {
          url: `${hooks}/hmac`,
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
        },
      },
    )
    await expectBuildPushes(answer.a2a_task_id, 'hmac', 'hmac:hmac')
  })

  it('takes the earlier 3.x key `configuration.pushNotificationConfig` on the 0.3 wire, with Bearer', async () => {
    const answer = await rpc(
      '0.3',
      { skill: 'get_creative_delivery', input: {} },
      {
        pushNotificationConfig: {
          url: `${hooks}/bearer`,
          authentication: { schemes: ['Bearer'], credentials: BEARER },
        },
      },
    )
    expect(answer).toMatchObject({ status: 'submitted' })
    await until(() => ofTask(answer.a2a_task_id).length >= 1, 'the Bearer push')
    expect(ofTask(answer.a2a_task_id).map((event) => [event.sender, event.status])).toEqual([
      ['bearer:bearer', 'completed'],
    ])
    expect(ofTask(answer.a2a_task_id)[0]!.data).toEqual({ creatives: [] })
  })

  it('takes the earlier 3.x key on the 1.0 wire too, signed RFC 9421 without authentication', async () => {
    const answer = await rpc(
      '1.0',
      { skill: 'build_creative', input: buildInput() },
      { pushNotificationConfig: { url: `${hooks}/rfc`, id: 'push-rfc' } },
    )
    await expectBuildPushes(answer.a2a_task_id, 'rfc', 'rfc9421:rfc')
  })

  it('sends a push_notification_config given inside the typed A2A input as MCP-shape envelopes', async () => {
    const answer = await rpc(
      '1.0',
      {
        skill: 'build_creative',
        input: {
          ...buildInput(),
          push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-a2a-input' },
        },
      },
      {},
    )
    await expectBuildPushes(answer.task_id, 'mcp', 'rfc9421:mcp')
    for (const event of ofTask(answer.task_id)) {
      expect(event.shape).toBe('mcp')
      expect(event.operationId).toBe('op-a2a-input')
      expect(event.payload.protocol).toBe('creative')
    }
  })

  it('pushes to both channels when the buyer registered both: MCP envelopes and A2A-native events', async () => {
    const answer = await rpc(
      '1.0',
      {
        skill: 'build_creative',
        input: {
          ...buildInput(),
          push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-both' },
          context: { correlation_id: 'both' },
        },
      },
      { taskPushNotificationConfig: { url: `${hooks}/rfc`, id: 'both-a2a' } },
    )
    // The MCP envelopes name the AdCP task, the A2A events the A2A Task the buyer holds.
    const both = () => [...ofTask(answer.task_id), ...ofTask(answer.a2a_task_id)]
    await until(() => both().length >= 4, `the pushes of ${answer.task_id}`)
    const seen = both().map((event) => [event.registrationId, event.shape, event.status])
    expect(seen.filter(([id]) => id === 'mcp')).toEqual([
      ['mcp', 'mcp', 'working'],
      ['mcp', 'mcp', 'completed'],
    ])
    expect(ofTask(answer.a2a_task_id).map((event) => [event.registrationId, event.shape])).toEqual([
      ['rfc', 'a2a'],
      ['rfc', 'a2a'],
    ])
    for (const event of ofTask(answer.task_id).filter((event) => event.shape === 'mcp')) {
      expect(event.operationId).toBe('op-both')
      expect(event.payload.context).toEqual({ correlation_id: 'both' })
    }
  })

  it.each([
    ['an unknown scheme', { scheme: 'Basic', credentials: HMAC_SECRET }, 'schemes'],
    ['two schemes', { schemes: ['HMAC-SHA256', 'Bearer'], credentials: HMAC_SECRET }, 'schemes'],
    ['a short credential', { schemes: ['HMAC-SHA256'], credentials: 'short' }, 'credentials'],
  ])('refuses %s with INVALID_REQUEST before running the task', async (_name, authentication, field) => {
    const answer = await rpc(
      '1.0',
      { skill: 'build_creative', input: { ...buildInput(), context: { correlation_id: 'bad-auth' } } },
      { taskPushNotificationConfig: { url: `${hooks}/hmac`, authentication } },
    )
    expect(answer.adcp_error).toMatchObject({
      code: 'INVALID_REQUEST',
      field: `configuration.taskPushNotificationConfig.authentication.${field}`,
    })
    expect(answer.context).toEqual({ correlation_id: 'bad-auth' })
  })

  it('leaves no delivery refused by a receiver', () => {
    expect(refusals).toEqual([])
  })
})

/** The official A2A client with the buyer's bearer token, speaking A2A 1.0 or (legacy compat) 0.3. */
async function officialClient(version: '1.0' | '0.3'): Promise<A2AClient> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${BUYER_TOKEN}`)
    return fetch(input, { ...init, headers })
  }
  const legacy = version === '0.3'
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, ...(legacy ? { legacyCompat: { enabled: true } } : {}) }),
      ],
      ...(legacy ? { cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }) } : {}),
    }),
  )
  if (!legacy) return factory.createFromUrl(agent.origin)
  // What a 0.3 client knows of the card: no supportedInterfaces, no securityRequirements.
  const card = (await (await fetch(`${agent.origin}/.well-known/agent-card.json`)).json()) as any
  const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacyView } = card
  return factory.createFromAgentCard(legacyView)
}

describe.each(['1.0', '0.3'] as const)('A2A %s pushes and the A2A Task the client holds', (version) => {
  it('carry its id and contextId, and GetTask on them answers that Task', async () => {
    const client = await officialClient(version)
    expect(client.protocolVersion).toMatch(version === '1.0' ? /^1\./ : /^0\.3/)
    const held = (await client.sendMessage(
      {
        tenant: '',
        message: {
          messageId: crypto.randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'data', value: { skill: 'build_creative', input: buildInput() } },
              metadata: undefined,
              filename: '',
              mediaType: 'application/json',
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: `push-ids-${version}`,
            taskId: '',
            url: `${hooks}/rfc`,
            token: '',
            authentication: undefined,
          },
          returnImmediately: false,
        },
        metadata: undefined,
      },
      { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
    )) as Task
    expect(held.id).not.toBe('')
    expect(held.contextId).not.toBe('')
    const answer = held.artifacts[0]?.parts[0]?.content?.value as Record<string, any>
    expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    // The A2A Task and the AdCP task are separate namespaces: the pushes name the one the client holds.
    expect(answer.task_id).not.toBe(held.id)
    await expectBuildPushes(held.id, 'rfc', 'rfc9421:rfc')
    for (const event of ofTask(held.id)) {
      const body = (event.payload.task ?? event.payload.statusUpdate ?? event.payload) as Record<string, any>
      expect([body.id ?? body.taskId, body.contextId]).toEqual([held.id, held.contextId])
      if (body.status?.message)
        expect(body.status.message).toMatchObject({ taskId: held.id, contextId: held.contextId })
      const fetched = await client.getTask({ tenant: '', id: event.taskId!, historyLength: undefined })
      expect([fetched.id, fetched.contextId]).toEqual([held.id, held.contextId])
    }
    expect(ofTask(answer.task_id)).toEqual([])
  })
})
