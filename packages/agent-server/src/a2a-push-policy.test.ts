/**
 * The webhook URL policy on A2A push registrations, with the official A2A client in 1.0 and 0.3 mode and raw
 * JSON-RPC on 127.0.0.1: `taskPushNotificationConfig` (and the earlier 3.x `pushNotificationConfig`) at
 * SendMessage, and the push-config methods (CreateTaskPushNotificationConfig, 0.3
 * `tasks/pushNotificationConfig/set`), pass the same policy as `push_notification_config`: https, a public
 * address, no `user:password@`; the development flag relaxes the first two only.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
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
import { generateSigningKey } from '@adwire/http-signatures'
import { createWebhookSender, MemoryOutboxStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import { a2aResponseData, a2aSendRequest } from '@adwire/agent-client'
import { startAgent, type RunningAgent } from './testing/support.js'

let strict: RunningAgent
let relaxed: RunningAgent

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'policy-key' })
  // Never started: accepted registrations stay in the outbox, nothing is sent anywhere.
  const sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk })
  strict = await startAgent({ sender, allowInsecureWebhookUrls: false })
  relaxed = await startAgent({ sender, allowInsecureWebhookUrls: true })
})
afterAll(async () => {
  await strict.close()
  await relaxed.close()
})

async function clientFor(agent: RunningAgent, version: '1.0' | '0.3'): Promise<A2AClient> {
  const legacy = version === '0.3'
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory(legacy ? { legacyCompat: { enabled: true } } : {})],
      ...(legacy ? { cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }) } : {}),
    }),
  )
  if (!legacy) return factory.createFromUrl(agent.origin)
  const card = (await (await fetch(`${agent.origin}/.well-known/agent-card.json`)).json()) as any
  const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacyView } = card
  return factory.createFromAgentCard(legacyView)
}

/** SendMessage of get_adcp_capabilities through the official client, registering `url` for pushes. */
async function send(client: A2AClient, url: string | undefined): Promise<Task> {
  return (await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [
          {
            content: {
              $case: 'data',
              value: { skill: 'get_adcp_capabilities', input: { context: { correlation_id: 'policy' } } },
            },
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
        taskPushNotificationConfig: url
          ? { tenant: '', id: 'push-1', taskId: '', url, token: '', authentication: undefined }
          : undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    },
    { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
  )) as Task
}

const answerOf = (task: Task) => task.artifacts[0]?.parts[0]?.content?.value as Record<string, any>

const REFUSED: [string, string][] = [
  ['https://user:secret@buyer.example/hooks', 'must not carry credentials'],
  ['https://user@buyer.example/hooks', 'must not carry credentials'],
  ['http://buyer.example/hooks', 'must be https'],
  ['https://10.1.2.3/hooks', 'must be a public address'],
  ['https://127.0.0.1/hooks', 'must be a public address'],
]

describe.each(['1.0', '0.3'] as const)(
  'A2A %s push registrations under the webhook URL policy',
  (version) => {
    it.each(REFUSED)('SendMessage refuses %s with INVALID_REQUEST on its url', async (url, problem) => {
      const task = await send(await clientFor(strict, version), url)
      expect(answerOf(task).adcp_error).toMatchObject({
        code: 'INVALID_REQUEST',
        // The 0.3 wire names it pushNotificationConfig.
        field: `configuration.${version === '1.0' ? 'taskPushNotificationConfig' : 'pushNotificationConfig'}.url`,
        message: expect.stringContaining(problem),
      })
      expect(answerOf(task).context).toEqual({ correlation_id: 'policy' })
    })

    it('SendMessage takes an https URL on a public host', async () => {
      const task = await send(await clientFor(strict, version), 'https://buyer.example/hooks')
      expect(answerOf(task).adcp_error).toBeUndefined()
      expect(answerOf(task).adcp).toEqual({ major_versions: [3] })
    })

    it('the push-config method refuses what SendMessage refuses, and takes a good URL', async () => {
      const client = await clientFor(strict, version)
      const task = await send(client, undefined)
      const config = (url: string) => ({
        tenant: '',
        id: `cfg-${crypto.randomUUID()}`,
        taskId: task.id,
        url,
        token: '',
        authentication: undefined,
      })
      for (const [url, problem] of REFUSED)
        await expect(client.createTaskPushNotificationConfig(config(url))).rejects.toThrow(problem)
      const good = config('https://buyer.example/hooks')
      expect(await client.createTaskPushNotificationConfig(good)).toMatchObject({
        url: good.url,
        taskId: task.id,
      })
    })

    it('the development flag allows http and local addresses, never userinfo', async () => {
      const client = await clientFor(relaxed, version)
      const local = await send(client, 'http://127.0.0.1:9/hooks')
      expect(answerOf(local).adcp_error).toBeUndefined()
      const withUser = await send(client, 'http://user:secret@127.0.0.1:9/hooks')
      expect(answerOf(withUser).adcp_error).toMatchObject({ code: 'INVALID_REQUEST' })
      const task = await send(client, undefined)
      await expect(
        client.createTaskPushNotificationConfig({
          tenant: '',
          id: 'cfg-user',
          taskId: task.id,
          url: 'http://user:secret@127.0.0.1:9/hooks',
          token: '',
          authentication: undefined,
        }),
      ).rejects.toThrow('must not carry credentials')
    })
  },
)

describe('raw JSON-RPC', () => {
  it('refuses the earlier 3.x key with userinfo on the 0.3 wire, and an empty userinfo', async () => {
    for (const url of ['https://user:secret@buyer.example/a', 'https://@buyer.example/a']) {
      const { headers, body } = a2aSendRequest({
        skill: 'get_adcp_capabilities',
        input: {},
        version: '0.3',
        configuration: { pushNotificationConfig: { url } },
      })
      const response = await fetch(`${strict.origin}/a2a`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      })
      expect(a2aResponseData(await response.json()).adcp_error).toMatchObject({
        code: 'INVALID_REQUEST',
        field: 'configuration.pushNotificationConfig.url',
      })
    }
  })
})
