import { readConformanceJson } from '@adwire/conformance'
import { generateSigningKey, MemoryReplayStore, type GeneratedSigningKey } from '@adwire/http-signatures'
import { parseWebhookPayload } from '@adwire/schemas'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from '../memory-stores.js'
import { createWebhookReceiver } from '../receiver/receiver.js'
import type { ReceivedEvent } from '../receiver/types.js'
import { createWebhookSender } from './sender.js'
import { startEndpoint, type TestEndpoint } from '../testing/sender.js'
import type { A2AVersion, WebhookRegistration } from './types.js'

let key: GeneratedSigningKey
beforeAll(async () => {
  key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-a2a-version' })
})
const endpoints: TestEndpoint[] = []
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()))
})

/** Every object key anywhere in a JSON value. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into)
  else if (typeof value === 'object' && value !== null)
    for (const [name, member] of Object.entries(value)) {
      into.add(name)
      keysOf(member, into)
    }
  return into
}

/** A buyer endpoint that hands every request to a receiver core with an A2A registration. */
async function buyer() {
  const published: ReceivedEvent[] = []
  const receiver = createWebhookReceiver({
    registration: () => ({
      id: 'a2a',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: 'https://seller.example',
      shape: 'a2a',
    }),
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    publish: async (event) => void published.push(event),
  })
  const answers: number[] = []
  const endpoint = await startEndpoint({
    fallback: async (request, response) => {
      const answer = await receiver.handle(
        new Request(request.url, { method: request.method, headers: request.headers, body: request.body }),
      )
      answers.push(answer.status)
      response.writeHead(answer.status, Object.fromEntries(answer.headers))
      response.end(await answer.text())
    },
  })
  endpoints.push(endpoint)
  return { endpoint, published, answers }
}

const registration = (
  url: string,
  a2aVersion?: A2AVersion,
  task?: { id: string; contextId: string },
): WebhookRegistration => ({
  channel: 'a2a',
  config: { id: `pnc_${a2aVersion ?? 'default'}`, url },
  context: { correlation_id: 'corr-version' },
  ...(a2aVersion ? { a2aVersion } : {}),
  ...(task ? { task } : {}),
})

/** Sends input-required then completed for one task and returns the two bodies as sent. */
async function deliver(options: {
  registration?: A2AVersion
  sender?: A2AVersion
  task?: { id: string; contextId: string }
}) {
  const target = await buyer()
  const sender = createWebhookSender({
    outbox: new MemoryOutboxStore(),
    key: key.privateJwk,
    ...(options.sender ? { a2aVersion: options.sender } : {}),
  })
  const hook = registration(`${target.endpoint.origin}/a2a`, options.registration, options.task)
  const task_id = `task_${crypto.randomUUID()}`
  await sender.notify(hook, {
    task_id,
    task_type: 'create_media_buy',
    status: 'input-required',
    message: 'Need approval',
    result: { reason: 'APPROVAL_REQUIRED' },
  })
  await sender.drain()
  await sender.notify(hook, {
    task_id,
    task_type: 'create_media_buy',
    status: 'completed',
    result: { media_buy_id: 'mb_1', packages: [] },
  })
  await sender.drain()
  const [interim, final] = target.endpoint.requests.map((request) => JSON.parse(request.text))
  return { ...target, task_id, interim, final }
}

describe('A2A 1.0 deliveries', () => {
  it('wraps a StreamResponse with TASK_STATE_* states, ROLE_AGENT and no kind anywhere', async () => {
    const { interim, final, task_id } = await deliver({ registration: '1.0' })
    expect(Object.keys(interim)).toEqual(['statusUpdate'])
    expect(interim.statusUpdate).toMatchObject({
      taskId: task_id,
      status: {
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: {
          role: 'ROLE_AGENT',
          parts: [
            { text: 'Need approval' },
            { data: { reason: 'APPROVAL_REQUIRED', context: { correlation_id: 'corr-version' } } },
          ],
        },
      },
    })
    // A2A 1.0 removed `final` from TaskStatusUpdateEvent.
    expect(interim.statusUpdate.final).toBeUndefined()
    expect(Object.keys(final)).toEqual(['task'])
    expect(final.task).toMatchObject({
      id: task_id,
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ data: { media_buy_id: 'mb_1' } }] }],
    })
    for (const body of [interim, final]) expect(keysOf(body).has('kind')).toBe(false)
  })

  it('uses the part and state shapes of the official a2a-1.0 extraction vectors', async () => {
    const vectors = readConformanceJson('test-vectors/a2a-response-extraction.json') as {
      vectors: Array<{ id: string; response: { status: { state: string }; artifacts?: unknown } }>
    }
    const official = vectors.vectors.find((vector) => vector.id === 'a2a-1.0-completed-no-kind')!
    const { final } = await deliver({ registration: '1.0' })
    expect(final.task.status.state).toBe(official.response.status.state)
    const shapeOf = (parts: Array<Record<string, unknown>>) => parts.map((part) => Object.keys(part).sort())
    const officialParts = (
      official.response.artifacts as Array<{ parts: Array<Record<string, unknown>> }>
    )[0]!.parts
    expect(shapeOf(final.task.artifacts[0].parts)).toEqual(
      shapeOf(officialParts).filter((keys) => keys.includes('data')),
    )
  })

  it('is accepted by the receiver core like v0.3: same statuses, same data, one publication each', async () => {
    const v1 = await deliver({ sender: '1.0' })
    const v03 = await deliver({})
    expect(v03.interim.kind).toBe('status-update')
    expect(v03.final).toMatchObject({ kind: 'task', status: { state: 'completed' } })
    for (const run of [v1, v03]) {
      expect(run.answers).toEqual([200, 200])
      expect(run.published.map((event) => [event.shape, event.status, event.terminal])).toEqual([
        ['a2a', 'input-required', false],
        ['a2a', 'completed', true],
      ])
      expect(run.published[1]!.data).toEqual({
        media_buy_id: 'mb_1',
        packages: [],
        context: { correlation_id: 'corr-version' },
      })
    }
    expect(v1.published.map((event) => event.data)).toEqual(v03.published.map((event) => event.data))
    expect(parseWebhookPayload(v1.final, { format: 'a2a' })).toMatchObject({ state: 'TASK_STATE_COMPLETED' })
  })

  it('lets the registration override the sender default, and refuses an unknown version', async () => {
    const { interim } = await deliver({ sender: '1.0', registration: '0.3' })
    expect(interim.kind).toBe('status-update')
    expect(() =>
      createWebhookSender({
        outbox: new MemoryOutboxStore(),
        key: key.privateJwk,
        a2aVersion: '2.0' as A2AVersion,
      }),
    ).toThrow(/a2aVersion/)
    const sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk })
    await expect(
      sender.notify(registration('https://buyer.example/a2a', '0.2' as A2AVersion), {
        task_id: 't',
        task_type: 'get_products',
        status: 'working',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
  })
})

describe('A2A deliveries of a registration made in an A2A task', () => {
  it.each(['1.0', '0.3'] as const)('carry that Task id and contextId in A2A %s', async (version) => {
    const task = { id: `a2a-task-${version}`, contextId: `a2a-context-${version}` }
    const { interim, final, published, task_id } = await deliver({ registration: version, task })
    const [update, result] = version === '1.0' ? [interim.statusUpdate, final.task] : [interim, final]
    expect([update.taskId, update.contextId]).toEqual([task.id, task.contextId])
    expect([update.status.message.taskId, update.status.message.contextId]).toEqual([task.id, task.contextId])
    expect([result.id, result.contextId]).toEqual([task.id, task.contextId])
    expect(published.map((event) => event.taskId)).toEqual([task.id, task.id])
    expect(JSON.stringify([interim, final])).not.toContain(`"${task_id}"`)
  })

  it('refuses a task without both ids', async () => {
    const sender = createWebhookSender({ outbox: new MemoryOutboxStore(), key: key.privateJwk })
    for (const task of [{ id: 'x', contextId: '' }, { id: 7, contextId: 'c' }, 'x'])
      await expect(
        sender.notify(
          { ...registration('https://buyer.example/a2a', '1.0'), task } as unknown as WebhookRegistration,
          { task_id: 't', task_type: 'get_products', status: 'working' },
        ),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
  })
})
