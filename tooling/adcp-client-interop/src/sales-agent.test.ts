/**
 * Interop judged from outside: a buyer built on the official AdCP client SDK (@adcp/client 4.8, which talks A2A
 * through the A2A 0.3 SDK and verifies webhooks with HMAC-SHA256, the 3.0 rules) against our sales agent as a
 * service on 127.0.0.1. Over MCP and A2A the buyer gets products (checked by the SDK against its own schema);
 * over MCP it creates a buy that the seller reviews (answered `submitted`) and receives the review's status
 * webhooks at its own endpoint, where the SDK's `handleWebhook` checks each HMAC signature with the buyer's
 * secret and hands the result to the buyer's handler.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's results are read as JSON */
import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADCPMultiAgentClient } from '@adcp/client'
import { parseEnv, startSalesAgent, type RunningSalesAgent } from '@adwire/app-sales-agent'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const BUYER_TOKEN = 'buyer-token-for-the-adcp-client-interop-0123'
const WEBHOOK_SECRET = 'buyer-webhook-secret-for-adcp-client-interop-0123456789'
const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' }

let dir: string
let agent: RunningSalesAgent
let endpoint: Server
let origin: string
let client: ADCPMultiAgentClient

/** What the buyer's webhook endpoint saw: the SDK's verdict on each delivery, and what its handler got. */
interface Received {
  readonly agentId: string
  readonly taskType: string
  readonly operationId: string
  readonly verified: boolean
  readonly error?: string
  readonly signature?: string
}
const received: Received[] = []
const handled: { agentId: string; status: string; data: any }[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'adwire-adcp-client-'))
  // Every buy waits for the seller's review, so create_media_buy answers `submitted` and pushes its statuses.
  agent = await startSalesAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'sales-agent.sqlite')}`,
      TOKENS: `buyer-1:${BUYER_TOKEN}:read+write+delete+approve`,
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      BUY_REVIEW: 'always',
      REVIEW_SECONDS: '0',
    }),
    { senderPollMs: 25, dueTickMs: 50 },
  )
  // The buyer's endpoint, as the SDK's README wires it: the raw body and the X-ADCP-* headers to handleWebhook.
  endpoint = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const [, , taskType = '', agentId = '', operationId = ''] = (request.url ?? '').split('/')
      const signature = request.headers['x-adcp-signature'] as string | undefined
      const timestamp = request.headers['x-adcp-timestamp'] as string | undefined
      client
        .agent(agentId)
        .handleWebhook(JSON.parse(raw), taskType, operationId, signature, timestamp, raw)
        .then(
          () => {
            received.push({
              agentId,
              taskType,
              operationId,
              verified: true,
              ...(signature ? { signature } : {}),
            })
            response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}')
          },
          (error: Error) => {
            received.push({ agentId, taskType, operationId, verified: false, error: error.message })
            response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}')
          },
        )
    })
  })
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`
  client = new ADCPMultiAgentClient(
    [
      {
        id: 'seller_mcp',
        name: 'Seller (MCP)',
        agent_uri: `${agent.url}/mcp`,
        protocol: 'mcp',
        auth_token: BUYER_TOKEN,
      },
      {
        id: 'seller_a2a',
        name: 'Seller (A2A)',
        agent_uri: agent.url,
        protocol: 'a2a',
        auth_token: BUYER_TOKEN,
      },
    ],
    {
      webhookUrlTemplate: `${origin}/webhook/{task_type}/{agent_id}/{operation_id}`,
      webhookSecret: WEBHOOK_SECRET,
      handlers: {
        onCreateMediaBuyStatusChange: (data: any, metadata: any) => {
          handled.push({ agentId: metadata.agent_id, status: metadata.status, data })
        },
      },
    },
  )
}, 60_000)

afterAll(async () => {
  await agent?.close()
  endpoint?.closeAllConnections()
  await new Promise((resolve) => endpoint?.close(resolve))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function until(condition: () => boolean, state: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${state()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe.each(['seller_mcp', 'seller_a2a'] as const)(
  'the official AdCP client as a buyer (%s)',
  (agentId) => {
    it("gets products that pass the SDK's own schema check", async () => {
      const products = await client.agent(agentId).getProducts({
        buying_mode: 'brief',
        brief: 'sports video',
        context: { correlation_id: `adcp-client-${agentId}` },
      } as any)
      // The SDK validates the answer against its own (3.0) product schema: delivery_measurement.provider is
      // required there, optional in 3.1.19.
      expect(products.success, JSON.stringify(products.error)).toBe(true)
      const list = (products.data as any).products as any[]
      expect(list.length).toBeGreaterThan(0)
      for (const product of list) expect(product.delivery_measurement.provider).toEqual(expect.any(String))
      const product = list.find((entry) => entry.product_id === 'summit_sports_preroll')
      expect(product?.pricing_options[0]).toMatchObject({ pricing_option_id: 'cpm_guaranteed' })
    })
  },
)

// Over A2A the SDK reads a 3.1 `submitted` create_media_buy (an A2A task completed with the AdCP status in its
// DataPart, as the 3.1 A2A profile says) as a completed buy and refuses it against its 3.0 response schema, so
// the buy flow below runs over MCP only.
describe('the official AdCP client buying over MCP', () => {
  const agentId = 'seller_mcp'
  it('creates a buy answered submitted, and verifies and handles its status webhooks', async () => {
    const seller = client.agent(agentId)
    // Through the SDK's generic executeTask: its createMediaBuy checks the request against the SDK's own
    // pre-3.0 schema first (buyer_ref required, idempotency_key refused), which no 3.1.19 request satisfies.
    // The push_notification_config (HMAC-SHA256 with the buyer's secret, no operation_id: the seller uses
    // the task id) is added by the SDK either way.
    const created = await seller.executeTask('create_media_buy', {
      idempotency_key: crypto.randomUUID(),
      account: { ...ACCOUNT, sandbox: true },
      brand: { domain: 'acmeoutdoor.example' },
      start_time: 'asap',
      end_time: '2099-06-30T23:59:59Z',
      packages: [{ product_id: 'summit_sports_preroll', pricing_option_id: 'cpm_guaranteed', budget: 20000 }],
      context: { correlation_id: 'adcp-client-buy' },
    } as any)
    expect(created.status, JSON.stringify(created.error ?? created.data)).toBe('submitted')

    // The review's statuses reach the buyer's endpoint as create_media_buy webhooks, each verified by the SDK
    // with the buyer's secret, and the completed one reaches the buyer's handler with the new buy.
    await until(
      () => handled.some((entry) => entry.agentId === agentId && entry.status === 'completed'),
      () => JSON.stringify({ created: created.data, received, handled }),
    )
    const mine = received.filter(
      (entry) => entry.agentId === agentId && entry.taskType === 'create_media_buy',
    )
    expect(mine.length).toBeGreaterThanOrEqual(2)
    for (const entry of mine) {
      expect(entry.error).toBeUndefined()
      expect(entry.verified).toBe(true)
      expect(entry.signature).toMatch(/^sha256=[0-9a-f]{64}$/)
    }
    const completed = handled.find((entry) => entry.agentId === agentId && entry.status === 'completed')!
    expect(completed.data.media_buy_id).toEqual(expect.any(String))
  })
})

it('refuses, in the SDK, a webhook signed with another secret (the check is real)', async () => {
  const body = JSON.stringify({
    task_id: 't',
    task_type: 'create_media_buy',
    status: 'completed',
    result: {},
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const wrong = `sha256=${createHmac('sha256', 'another-secret-of-at-least-32-characters').update(`${timestamp}.${body}`).digest('hex')}`
  await expect(
    client
      .agent('seller_mcp')
      .handleWebhook(JSON.parse(body), 'create_media_buy', 'op', wrong, timestamp, body),
  ).rejects.toThrow(/Invalid webhook signature/)
})
