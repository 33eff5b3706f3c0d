/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
/**
 * resumeUpdates: a task answered `submitted` stores `context.webhooks` (plain JSON); another server over the
 * same sender, as after a restart, pushes its later statuses with the call's envelope (operation_id verbatim,
 * context echoed) and nothing after a terminal status.
 */
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { generateSigningKey, MemoryReplayStore } from '@adwire/http-signatures'
import {
  createWebhookReceiver,
  createWebhookSender,
  MemoryClaimStore,
  MemoryConvergenceStore,
  MemoryOutboxStore,
  type ReceivedEvent,
  type WebhookSender,
} from '@adwire/webhooks'
import { serve, type ServerType } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTask } from './define-task.js'
import { createAgentServer } from './server.js'
import { BUYER_TOKEN, FormatId, startAgent, tokens, type RunningAgent } from './testing/support.js'
import type { TaskWebhooks } from './types.js'

const stored = new Map<string, string>()

const deferred = defineTask({
  name: 'build_creative',
  description: 'Builds a creative later',
  input: z.object({ target_format_id: FormatId }).strict(),
  output: z.object({
    creative_manifest: z.object({ format_id: FormatId, assets: z.record(z.string(), z.unknown()) }),
  }),
  access: { resource: 'creatives', permission: 'write' },
  handler: (_input, context) => {
    const taskId = `task_${crypto.randomUUID()}`
    stored.set(taskId, JSON.stringify(context.webhooks))
    return { status: 'submitted', task_id: taskId } as const
  },
})

let agent: RunningAgent
let sender: WebhookSender
let receiverServer: ServerType
let hookUrl: string
const published: ReceivedEvent[] = []

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'agent-key-1' })
  const receiver = createWebhookReceiver({
    registration: () => ({
      id: 'buyer',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: 'demo-agent',
      shape: 'mcp',
    }),
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    publish: async (event) => void published.push(event),
  })
  receiverServer = await new Promise((resolve) => {
    const started = serve(
      { fetch: (request) => receiver.handle(request), port: 0, hostname: '127.0.0.1' },
      () => resolve(started),
    )
  })
  hookUrl = `http://127.0.0.1:${(receiverServer.address() as AddressInfo).port}/webhooks/buyer`
  sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk, pollIntervalMs: 20 })
  sender.start()
  agent = await startAgent({ tasks: [deferred], auth: { tokens }, sender })
})
afterAll(async () => {
  await sender.stop()
  await agent.close()
  await new Promise<void>((resolve) => receiverServer.close(() => resolve()))
})

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now()
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const format = { agent_url: 'https://agent.example', id: 'display_300x250' }

describe('resumeUpdates', () => {
  it('pushes a stored task from another server with the same envelope, nothing after terminal', async () => {
    const client = new Client({ name: 'buyer', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${BUYER_TOKEN}` } },
      }),
    )
    const context = { correlation_id: 'resume-1' }
    const answer = (
      await client.callTool({
        name: 'build_creative',
        arguments: {
          target_format_id: format,
          context,
          push_notification_config: { url: hookUrl, operation_id: 'op-resume-1' },
        },
      })
    ).structuredContent as Record<string, any>
    await client.close()
    expect(answer).toMatchObject({ status: 'submitted', context })
    const webhooks = JSON.parse(stored.get(answer.task_id)!) as TaskWebhooks
    expect(webhooks).toMatchObject({ task: 'build_creative', context })
    expect(webhooks.registrations).toEqual([
      { channel: 'adcp', config: { url: hookUrl, operation_id: 'op-resume-1' }, context },
    ])

    // Another server (a restart): nothing of the first call's memory.
    const restarted = createAgentServer({
      tasks: [deferred],
      name: 'demo-agent',
      version: '1.0.0',
      url: agent.origin,
      sender,
    })
    const updates = restarted.resumeUpdates(answer.task_id, webhooks, 'submitted')
    await updates.update('working', { percentage: 50 })
    await updates.update('working', { percentage: 60 })
    await updates.update('completed', { creative_manifest: { format_id: format, assets: {} } })
    await until(() => published.filter((event) => event.taskId === answer.task_id).length >= 2)
    const events = published.filter((event) => event.taskId === answer.task_id)
    expect(events.map((event) => event.status)).toEqual(['working', 'completed'])
    for (const event of events) {
      expect(event.operationId).toBe('op-resume-1')
      expect(event.taskType).toBe('build_creative')
      expect(event.payload.context).toEqual(context)
      expect(event.payload.protocol).toBe('creative')
    }
    expect(events[1]!.payload.result).toMatchObject({ creative_manifest: { format_id: format }, context })

    // The buyer heard `completed`: a resumed stream from there fires nothing more.
    const late = restarted.resumeUpdates(answer.task_id, webhooks, 'completed')
    await expect(late.update('failed', { errors: [] })).rejects.toMatchObject({
      code: 'webhook_after_terminal',
    })
    expect(() =>
      restarted.resumeUpdates('task_x', { ...webhooks, task: 'unknown_task' }, 'submitted'),
    ).toThrow(TypeError)
  })
})
