/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
/**
 * Our failed tasks carry their AdCP error where the official extraction rules find it: the rules of
 * `test-vectors/a2a-response-extraction.json` and `webhook-payload-extraction.json` (checked on every vector
 * first), applied to the A2A responses and the webhooks this server sends.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readConformanceJson } from '@adwire/conformance'
import { generateSigningKey } from '@adwire/http-signatures'
import { createWebhookSender, MemoryOutboxStore, type WebhookSender } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { a2aSendRequest } from '@adwire/agent-client'
import { defineTask } from './define-task.js'
import { AgentError } from './errors.js'
import { startAgent, type RunningAgent } from './testing/support.js'

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const FINAL = new Set(['completed', 'failed', 'rejected', 'canceled'])
const stateOf = (state: string) =>
  state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-')
const dataOf = (parts: unknown): Record<string, any>[] =>
  (Array.isArray(parts) ? parts : [])
    .filter((part) => isObject(part) && (part.kind === 'data' || 'data' in part))
    .map((part) => part.data)
    .filter(isObject)

/** The official A2A extraction: final states read the last DataPart of the first artifact, else the status message. */
function extractA2A(response: Record<string, any>): Record<string, any> | null {
  if (isObject(response.artifactUpdate)) return null
  const task = isObject(response.task)
    ? response.task
    : isObject(response.statusUpdate)
      ? response.statusUpdate
      : response
  const fromStatus = () => dataOf(task.status?.message?.parts)[0] ?? null
  if (!FINAL.has(stateOf(String(task.status?.state)))) return fromStatus()
  if (!Array.isArray(task.artifacts) || task.artifacts.length === 0) return fromStatus()
  const data = dataOf(task.artifacts[0].parts).at(-1) ?? null
  if (data && Object.keys(data).length === 1 && isObject(data.response)) throw new Error('wrapper_detected')
  return data
}

/** The official webhook extraction: the MCP envelope's `result`, or the A2A Task's data. */
const extractWebhook = (format: string, payload: Record<string, any>) =>
  format === 'mcp' ? (isObject(payload.result) ? payload.result : null) : extractA2A(payload)

const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b))

const a2aVectors = (readConformanceJson('test-vectors/a2a-response-extraction.json') as any).vectors as any[]
const webhookVectors = (readConformanceJson('test-vectors/webhook-payload-extraction.json') as any)
  .vectors as any[]

describe('the official extraction rules (on the vectors)', () => {
  it.each(a2aVectors.map((vector) => [vector.id, vector]))('a2a %s', (_id, vector) => {
    if (vector.expected_error_type)
      expect(() => extractA2A(vector.response)).toThrow(vector.expected_error_type)
    else same(extractA2A(vector.response), vector.expected_data)
  })
  it.each(webhookVectors.map((vector) => [vector.id, vector]))('webhook %s', (_id, vector) => {
    same(extractWebhook(vector.format, vector.payload), vector.expected_data)
  })
})

/** A task answering what its input says: `data` as the response, or `error` thrown; `later` goes async. */
let pushed: { url: string; body: any }[] = []
let hooks: Server
let hookUrl: string
let sender: WebhookSender
let agent: RunningAgent

const vectorTask = defineTask({
  // A task type of the webhook envelope's enum (the MCP-shape envelope names it).
  name: 'build_creative',
  description: 'Answers a vector',
  input: z.looseObject({
    data: z.looseObject({}).optional(),
    error: z.looseObject({}).optional(),
    later: z.boolean().optional(),
  }),
  output: z.looseObject({}),
  access: 'public',
  handler: (input, context) => {
    const error = input.error as any
    const thrown = error
      ? new AgentError(error.code, error.message, {
          ...(error.recovery ? { recovery: error.recovery } : {}),
          ...(error.retry_after ? { retryAfter: error.retry_after } : {}),
          ...(error.field ? { field: error.field } : {}),
          ...(error.suggestion ? { suggestion: error.suggestion } : {}),
          ...(error.details ? { details: error.details } : {}),
        })
      : undefined
    if (input.later) {
      const taskId = `task_${crypto.randomUUID()}`
      setTimeout(
        () => void context.updates(taskId).update('failed', { errors: [thrown!.toAdcpError()] }, 'failed'),
        20,
      )
      return { status: 'submitted' as const, task_id: taskId }
    }
    if (thrown) throw thrown
    return input.data ?? {}
  },
})

beforeAll(async () => {
  hooks = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk) => (text += chunk))
    request.on('end', () => {
      pushed.push({ url: request.url ?? '', body: JSON.parse(text) })
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve))
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'extraction-key' })
  sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk, pollIntervalMs: 20 })
  sender.start()
  agent = await startAgent({ tasks: [vectorTask], sender })
})
afterAll(async () => {
  await sender.stop()
  await agent.close()
  await new Promise<void>((resolve) => hooks.close(() => resolve()))
})

async function a2a(input: Record<string, unknown>, configuration?: Record<string, unknown>) {
  const { headers, body } = a2aSendRequest({
    skill: 'build_creative',
    input,
    ...(configuration ? { configuration } : {}),
  })
  const response = await fetch(`${agent.origin}/a2a`, { method: 'POST', headers, body: JSON.stringify(body) })
  return ((await response.json()) as any).result
}

describe('our A2A responses and webhooks, through the same rules', () => {
  // proto-pollution-payload tests the extractor itself: our server never echoes a `__proto__` member.
  const answered = a2aVectors.filter(
    (vector) =>
      vector.path === 'artifact' &&
      isObject(vector.expected_data) &&
      !vector.expected_error_type &&
      vector.id !== 'proto-pollution-payload',
  )

  it.each(answered.map((vector) => [vector.id, vector]))('a2a %s', async (_id, vector) => {
    const expected = vector.expected_data
    if (isObject(expected.adcp_error)) {
      const extracted = extractA2A(await a2a({ error: expected.adcp_error }))!
      expect(extracted.adcp_error).toEqual(expected.adcp_error)
      expect(extracted.errors).toEqual([expected.adcp_error])
    } else {
      expect(extractA2A(await a2a({ data: expected }))).toMatchObject(JSON.parse(JSON.stringify(expected)))
    }
  })

  it.each(
    webhookVectors.filter((vector) => isObject(vector.expected_data?.adcp_error)).map((v) => [v.id, v]),
  )('webhook %s', async (_id, vector) => {
    pushed = []
    const error = vector.expected_data.adcp_error
    const path = `/${vector.id}`
    const input = { error, later: true }
    if (vector.format === 'mcp')
      await a2a({ ...input, push_notification_config: { url: `${hookUrl}${path}`, operation_id: 'op-1' } })
    else await a2a(input, { taskPushNotificationConfig: { url: `${hookUrl}${path}` } })
    const start = Date.now()
    while (!pushed.some((push) => push.url === path) && Date.now() - start < 5000)
      await new Promise((resolve) => setTimeout(resolve, 20))
    const push = pushed.find((entry) => entry.url === path)!
    expect(extractWebhook(vector.format, push.body)?.adcp_error).toEqual(
      expect.objectContaining({ code: error.code, message: error.message, recovery: error.recovery }),
    )
  })
})
