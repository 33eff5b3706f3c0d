/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
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
import { BUYER_TOKEN, startAgent, tokens, type RunningAgent } from './testing/support.js'

let agent: RunningAgent
let sender: WebhookSender
let receiverServer: ServerType
let hookUrl: string
const published: ReceivedEvent[] = []
const outbox = new MemoryOutboxStore()

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
  sender = createWebhookSender({ outbox, key: key.privateJwk, pollIntervalMs: 20 })
  sender.start()
  agent = await startAgent({ auth: { tokens }, idempotency: { store: new MemoryClaimStore() }, sender })
})
afterAll(async () => {
  await sender.stop()
  await agent.close()
  await new Promise<void>((resolve) => receiverServer.close(() => resolve()))
})

async function build(args: Record<string, unknown>): Promise<Record<string, any>> {
  const client = new Client({ name: 'buyer', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${BUYER_TOKEN}` } },
    }),
  )
  try {
    return (await client.callTool({ name: 'build_creative', arguments: args })).structuredContent as Record<
      string,
      any
    >
  } finally {
    await client.close()
  }
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now()
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const format = { agent_url: 'https://agent.example', id: 'display_300x250' }

describe('async tasks', () => {
  it('answers submitted, then pushes signed working and completed webhooks with context echoed', async () => {
    const context = { correlation_id: 'async-1' }
    const response = await build({
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: format,
      message: 'async',
      context,
      push_notification_config: { url: hookUrl, operation_id: 'op-async-1' },
    })
    expect(response).toMatchObject({ status: 'submitted', task_id: expect.any(String), context })
    await until(() => published.filter((event) => event.taskId === response.task_id).length >= 2)
    const events = published.filter((event) => event.taskId === response.task_id)
    expect(events.map((event) => event.status)).toEqual(['working', 'completed'])
    for (const event of events) {
      expect(event.operationId).toBe('op-async-1')
      expect(event.taskType).toBe('build_creative')
      expect(event.payload.context).toEqual(context)
      // core/mcp-webhook-payload.json `protocol` (enums/adcp-protocol.json), from the task's default.
      expect(event.payload.protocol).toBe('creative')
    }
    expect(events[1]!.payload.result).toMatchObject({ creative_manifest: { format_id: format }, context })
  })

  it('refuses a legacy Bearer push registration for a mutating task in the response itself', async () => {
    const response = await build({
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: format,
      message: 'async',
      push_notification_config: {
        url: hookUrl,
        operation_id: 'op-bearer-1',
        authentication: { schemes: ['Bearer'], credentials: 'bearer-credential-0123456789abcdef0123' },
      },
    })
    expect(response.adcp_error).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'push_notification_config.authentication',
    })
    expect(response.adcp_error.message).toContain('Bearer')
    expect(await sender.activity('op-bearer-1')).toEqual([])
  })

  it('sends no webhook for a terminal initial response', async () => {
    const response = await build({
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: format,
      push_notification_config: { url: hookUrl, operation_id: 'op-sync-1' },
    })
    expect(response).toHaveProperty('creative_manifest')
    await new Promise((resolve) => setTimeout(resolve, 150))
    // Nothing about this operation was queued or delivered (the previous test's entries may still settle).
    expect(published.filter((event) => event.operationId === 'op-sync-1')).toEqual([])
    const queued = await outbox.pending()
    expect(queued.filter((entry) => entry.body.includes('op-sync-1'))).toEqual([])
    expect(await sender.activity('op-sync-1')).toEqual([])
  })
})

describe('task protocol', () => {
  const base = {
    description: 'x',
    input: z.object({}),
    output: z.object({}),
    access: 'public' as const,
    handler: () => ({}),
  }

  it('defaults to the AdCP protocol of known task names, and takes an explicit one', () => {
    expect(defineTask({ ...base, name: 'build_creative' }).protocol).toBe('creative')
    expect(defineTask({ ...base, name: 'create_media_buy' }).protocol).toBe('media-buy')
    expect(defineTask({ ...base, name: 'activate_signal' }).protocol).toBe('signals')
    expect(defineTask({ ...base, name: 'my_task' }).protocol).toBeUndefined()
    expect(defineTask({ ...base, name: 'my_task', protocol: 'brand' }).protocol).toBe('brand')
  })

  it('refuses a protocol outside enums/adcp-protocol.json', () => {
    expect(() => defineTask({ ...base, name: 'my_task', protocol: 'media_buy' as never })).toThrow(
      /protocol must be one of media-buy, /,
    )
  })
})
