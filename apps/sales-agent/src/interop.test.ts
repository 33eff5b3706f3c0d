/**
 * Interop judged from outside. The sales agent (the real service on 127.0.0.1) is driven by the official A2A SDK
 * client in A2A 1.0 and in 0.3 mode (get_products, create_media_buy with an A2A push notification config whose
 * pushes arrive, get_media_buy_delivery), and the webhooks it sends are checked by a verifier written to the AdCP
 * 3.0 rules (testing/webhook-verifier-30.ts, independent of our signing packages): A2A pushes and MCP-shape task
 * webhooks to the RFC 9421 webhook-signing profile against the keys its brand.json publishes, delivery reports (whose
 * 3.1.19 reporting_webhook requires a legacy authentication) to the HMAC-SHA256 rules.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON payloads freely */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JsonWebKey } from 'node:crypto'
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
import { ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookEvents } from '@adwire/seller'
import type { RunningSalesAgent } from './service.js'
import { ACCOUNT, BUYER_TOKEN, expectOfficial, mcpOk, newKey, startTestAgent, until } from './test-support.js'
import {
  Refused,
  createVerifier30,
  keysFromBrandJson,
  verifyHmac30,
  type RawDelivery,
} from './testing/webhook-verifier-30.js'

const PUSH_TOKEN = 'buyer-push-token-for-interop-0123456789'
const REPORT_SECRET = 'buyer-report-secret-for-interop-0123456789'

let offset = 0
const now = () => Date.now() / 1000 + offset
let agent: RunningSalesAgent
let keys: JsonWebKey[]
let server: Server
let origin: string
/** Every request the buyer's endpoint received, in order. */
const deliveries: (RawDelivery & { path: string })[] = []

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

beforeAll(async () => {
  // Every buy waits for the seller's review, so create_media_buy answers `submitted` and its statuses are pushed.
  agent = await startTestAgent(
    { BUY_REVIEW: 'always', REVIEW_SECONDS: '0' },
    { now, reportPeriodSeconds: 3600, reportTickMs: 3_600_000 },
  )
  keys = await keysFromBrandJson(agent.url)
  server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      )
      const path = request.url ?? '/'
      deliveries.push({
        path,
        method: request.method ?? 'POST',
        url: `http://${headers.host}${path}`,
        headers,
        body,
      })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"accepted"}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}, 60_000)

afterAll(async () => {
  await agent?.close()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const at = (path: string) => deliveries.filter((delivery) => delivery.path === path)
const json = (delivery: RawDelivery): any => JSON.parse(delivery.body.toString('utf8'))

/** The official A2A SDK client in the given protocol version, carrying the buyer's bearer token. */
async function a2aClient(version: '1.0' | '0.3'): Promise<A2AClient> {
  const fetchImpl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${BUYER_TOKEN}`)
    try {
      return await fetch(input, { ...init, headers })
    } catch (error) {
      // A pooled keep-alive socket the agent closed as it was reused (the test and the agent share one event loop;
      // on a loaded machine a stalled loop lets the agent's idle timer fire first): undici reports it as a socket
      // error or a reset. Send it once more on a new connection; every write carries an idempotency_key.
      const code = (error as { cause?: { code?: string } }).cause?.code
      if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET') throw error
      return fetch(input, { ...init, headers })
    }
  }
  if (version === '1.0') {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    )
    return factory.createFromUrl(agent.url)
  }
  // What a 0.3 client knows of the card: the 0.3 fields only.
  const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as any
  const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacyView } = card
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
    }),
  )
  return factory.createFromAgentCard(legacyView as never)
}

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})

/** One skill call: `{skill, input}` on 1.0, `{skill, parameters}` on 0.3; the AdCP answer of the task's artifact. */
async function call(
  client: A2AClient,
  version: '1.0' | '0.3',
  skill: string,
  input: Record<string, unknown>,
  pushUrl?: string,
): Promise<{ task: Task; data: any }> {
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [dataPart(version === '1.0' ? { skill, input } : { skill, parameters: input })],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: pushUrl
        ? {
            acceptedOutputModes: [],
            taskPushNotificationConfig: {
              tenant: '',
              id: `push-${version}`,
              taskId: '',
              url: pushUrl,
              token: PUSH_TOKEN,
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
  const task = result as Task
  return { task, data: task.artifacts[0]?.parts[0]?.content?.value }
}

/** The AdCP payload of an A2A push (a status update's message DataPart, or a task's artifact DataPart). */
function pushData(body: any, version: '1.0' | '0.3'): { state: string; data: any } {
  const inner = version === '1.0' ? (body.task ?? body.statusUpdate) : body
  const parts = inner.artifacts?.[0]?.parts ?? inner.status.message?.parts ?? []
  const data = parts.find((part: any) => part.data !== undefined)?.data
  return { state: inner.status.state, data }
}

describe.each(['1.0', '0.3'] as const)('the official A2A client in %s mode', (version) => {
  it('gets products, creates a buy whose A2A pushes arrive signed to the 3.0 rules, and reads its delivery', async () => {
    const client = await a2aClient(version)
    expect(client.protocolVersion.startsWith(version)).toBe(true)

    const products = await call(client, version, 'get_products', {
      buying_mode: 'brief',
      brief: 'sports video',
      context: { correlation_id: `interop-${version}` },
    })
    expect(products.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expectOfficial('media-buy/get-products-response.json', products.data)
    expect(products.data.context).toEqual({ correlation_id: `interop-${version}` })
    const product = products.data.products.find((entry: any) => entry.product_id === 'summit_sports_preroll')
    expect(product.pricing_options[0]).toMatchObject({ pricing_option_id: 'cpm_guaranteed', fixed_price: 28 })

    const path = `/a2a-push/${version}`
    const created = await call(
      client,
      version,
      'create_media_buy',
      {
        idempotency_key: newKey(),
        account: { ...ACCOUNT, sandbox: true },
        brand: { domain: 'acmeoutdoor.example' },
        start_time: 'asap',
        end_time: '2099-06-30T23:59:59Z',
        packages: [{ product_id: product.product_id, pricing_option_id: 'cpm_guaranteed', budget: 20000 }],
        // The seller takes a buy through its review (an async answer) only when the AdCP request registers a
        // push_notification_config; its MCP-shape webhooks go to another path, the A2A-native pushes to `path`.
        push_notification_config: { url: `${origin}/a2a-mcp/${version}`, operation_id: `op-a2a-${version}` },
        context: { correlation_id: `interop-${version}-buy` },
      },
      `${origin}${path}`,
    )
    expectOfficial('media-buy/create-media-buy-response.json', created.data)
    expect(created.data).toMatchObject({ status: 'submitted', task_id: expect.any(String) })

    // The review's working and completed statuses, pushed in the registration's A2A version.
    await until(() => at(path).length >= 2 && at(`/a2a-mcp/${version}`).length >= 2)
    const pushes = at(path)
    const verifier = createVerifier30(keys, now)
    for (const webhook of at(`/a2a-mcp/${version}`)) {
      expect(verifier.verify(webhook)).toBe((keys[0] as { kid: string }).kid)
      expect(json(webhook)).toMatchObject({
        operation_id: `op-a2a-${version}`,
        task_id: created.data.task_id,
      })
    }
    for (const push of pushes) {
      expect(verifier.verify(push)).toBe((keys[0] as { kid: string }).kid)
      expect(push.headers['x-a2a-notification-token']).toBe(PUSH_TOKEN)
      expect(push.headers['content-type']).toMatch(/^application\/json/)
    }
    const [working, completed] = pushes.map((push) => json(push))
    if (version === '1.0') {
      expect(Object.keys(working)).toEqual(['statusUpdate'])
      expect(Object.keys(completed)).toEqual(['task'])
    } else {
      expect([working.kind, completed.kind]).toEqual(['status-update', 'task'])
    }
    const states = [pushData(working, version).state, pushData(completed, version).state]
    expect(states).toEqual(
      version === '1.0' ? ['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'] : ['working', 'completed'],
    )
    // Both name the A2A Task the client holds (not the AdCP task_id, another namespace), and GetTask on it works.
    for (const push of [working, completed]) {
      const body = version === '1.0' ? (push.statusUpdate ?? push.task) : push
      expect([body.taskId ?? body.id, body.contextId]).toEqual([created.task.id, created.task.contextId])
    }
    const held = await client.getTask({ tenant: '', id: created.task.id, historyLength: undefined })
    expect([held.id, held.contextId]).toEqual([created.task.id, created.task.contextId])
    const result = pushData(completed, version).data
    expectOfficial('media-buy/create-media-buy-response.json', result)
    expect(result.media_buy_id).toEqual(expect.any(String))

    const delivery = await call(client, version, 'get_media_buy_delivery', {
      account: { ...ACCOUNT, sandbox: true },
      media_buy_ids: [result.media_buy_id],
    })
    expect(delivery.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expectOfficial('media-buy/get-media-buy-delivery-response.json', delivery.data)
    expect(delivery.data.media_buy_deliveries.map((entry: any) => entry.media_buy_id)).toEqual([
      result.media_buy_id,
    ])
  }, 120_000)
})

describe('a verifier written to the 3.0 rules', () => {
  it("verifies the agent's MCP task webhooks (RFC 9421) and its scheduled and final delivery reports (HMAC)", async () => {
    const submitted = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      {
        idempotency_key: newKey(),
        account: ACCOUNT,
        brand: { domain: 'acmeoutdoor.example' },
        start_time: 'asap',
        end_time: '2099-06-30T23:59:59Z',
        packages: [
          { product_id: 'summit_sports_preroll', pricing_option_id: 'cpm_guaranteed', budget: 20000 },
        ],
        push_notification_config: { url: `${origin}/mcp-task`, operation_id: 'op-interop-30' },
        reporting_webhook: {
          url: `${origin}/reports`,
          reporting_frequency: 'hourly',
          authentication: { schemes: ['HMAC-SHA256'], credentials: REPORT_SECRET },
        },
      },
      'media-buy/create-media-buy-response.json',
    )
    expect(submitted.status).toBe('submitted')
    await until(() => at('/mcp-task').length >= 2)
    // Verified on arrival, before the agent's clock moves on to the report.
    const taskVerifier = createVerifier30(keys, now)
    for (const delivery of at('/mcp-task')) expect(taskVerifier.verify(delivery)).toBeTruthy()
    const tasks = at('/mcp-task').map((delivery) => json(delivery))
    for (const payload of tasks) {
      expectOfficial('core/mcp-webhook-payload.json', payload)
      expect(payload.operation_id).toBe('op-interop-30')
    }
    expect(tasks.map((payload) => payload.status)).toEqual(['working', 'completed'])
    const mediaBuyId = tasks[1].result.media_buy_id as string

    offset += 3601
    expect(await (agent.runtime.deps.events as WebhookEvents).tick()).toBeGreaterThanOrEqual(1)
    await until(() => at('/reports').length >= 1)
    await mcpOk(
      agent,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: mediaBuyId, canceled: true },
      'media-buy/update-media-buy-response.json',
    )
    await until(() => at('/reports').length >= 2)
    const reports = at('/reports').map((delivery) => json(delivery))
    for (const report of reports) {
      expectOfficial('core/mcp-webhook-payload.json', report)
      expectOfficial('media-buy/media-buy-delivery-webhook-result.json', report.result)
    }
    expect(reports.map((report) => report.result.notification_type)).toEqual(['scheduled', 'final'])

    for (const delivery of at('/reports')) {
      expect(() => verifyHmac30(delivery, REPORT_SECRET, now)).not.toThrow()
      // One mode per registration: an HMAC registration gets no RFC 9421 signature.
      expect(delivery.headers['signature-input']).toBeUndefined()
    }
  }, 120_000)

  it('refuses what the 3.0 rules refuse: a changed body, a replayed nonce, a key not marked webhook-signing', () => {
    const delivery = at('/mcp-task')[0]!
    // The clock of the delivery's signing: the refusals below are each for the reason named.
    const signedAt = Number(/;created=(\d+)/.exec(delivery.headers['signature-input']!)![1])
    const clock = () => signedAt
    const verifier = createVerifier30(keys, clock)
    const refusal = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        if (error instanceof Refused) return error.code
        throw error
      }
      return 'accepted'
    }
    const tampered = {
      ...delivery,
      body: Buffer.concat([delivery.body, Buffer.from(' ')]),
    }
    expect(refusal(() => verifier.verify(tampered))).toBe('webhook_signature_digest_mismatch')
    expect(refusal(() => verifier.verify(delivery))).toBe('accepted')
    expect(refusal(() => verifier.verify(delivery))).toBe('webhook_signature_replayed')
    // The same key published for request signing (what 3.1 also accepts on webhooks) is refused by a 3.0 verifier.
    const asRequestKey = keys.map((key) => ({ ...key, adcp_use: 'request-signing' })) as JsonWebKey[]
    expect(refusal(() => createVerifier30(asRequestKey, clock).verify(delivery))).toBe(
      'webhook_signature_key_purpose_invalid',
    )
    const moved = { ...delivery, url: delivery.url.replace('/mcp-task', '/elsewhere') }
    expect(refusal(() => createVerifier30(keys, clock).verify(moved))).toBe('webhook_signature_invalid')
    const report = at('/reports')[0]!
    expect(refusal(() => verifyHmac30(report, `${REPORT_SECRET}-other`, now))).toBe('hmac_signature_invalid')
    expect(refusal(() => verifyHmac30({ ...report, body: tampered.body }, REPORT_SECRET, now))).toBe(
      'hmac_signature_invalid',
    )
  })
})
