/**
 * `pnpm bench`: the sales agent with 10,000 media buys stored, on SQLite and on PostgreSQL (when
 * ADWIRE_TEST_POSTGRES_URL answers), each reported beside a primitive measured in the same run (benches report
 * ratios against primitives, never absolute targets; nothing is asserted):
 *
 * - create_media_buy and get_media_buy_delivery (one buy of the 10,000, daily breakdown) latency over MCP with
 *   the official client, sequential calls, against get_adcp_capabilities through the same client (the MCP,
 *   auth and validation path with a static answer): ratio = task latency ÷ primitive latency;
 * - outbox deliveries/s: 2,000 delivery-report webhooks enqueued, then delivered (RFC 9421 signed, recorded as
 *   webhook_activity) to a local receiver answering 200, by one sender worker and by two senders on the same
 *   outbox (two instances), against bare unsigned POSTs of the same bodies to the same receiver with the same
 *   number in flight: ratio = deliveries/s ÷ bare POSTs/s.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createWebhookSender, type WebhookSender } from '@adwire/webhooks'
import { sameLoopFetch } from '@adwire/agent-test-kit'
import pg from 'pg'
import { parseEnv } from '../src/env.js'
import { startSalesAgent, type RunningSalesAgent } from '../src/service.js'
import { openStorage } from '@adwire/seller'

const BUYS = 10_000
const CALLS = Number(process.env.BENCH_CALLS ?? 200)
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2000)
const SENDER_CONCURRENCY = 8
const TOKEN = 'bench-buyer-token-0123456789abcdef'
const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle.example' }

const buyRequest = () => ({
  idempotency_key: `bench_${crypto.randomUUID()}`,
  account: ACCOUNT,
  brand: { domain: 'acmeoutdoor.example' },
  start_time: 'asap',
  end_time: '2099-06-30T23:59:59Z',
  packages: [
    {
      product_id: 'trailhead_lifestyle_display',
      pricing_option_id: 'cpm_standard',
      budget: 5000,
      bid_price: 7,
    },
  ],
})

async function mcpClient(agent: RunningSalesAgent): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      // A keep-alive socket the server reset while this thread was busy is retried once, not a failed run.
      fetch: sameLoopFetch,
    }),
  )
  return client
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length

/** Sequential calls: latencies in ms. */
async function latencies(call: () => Promise<unknown>, count = CALLS): Promise<number[]> {
  for (let warm = 0; warm < 10; warm++) await call()
  const out: number[] = []
  for (let index = 0; index < count; index++) {
    const began = performance.now()
    await call()
    out.push(performance.now() - began)
  }
  return out
}

const line = (name: string, values: number[], primitive: number[]) =>
  `  ${name.padEnd(24)} mean ${mean(values).toFixed(1).padStart(6)} ms  p50 ${percentile(values, 0.5).toFixed(1).padStart(6)}  p95 ${percentile(values, 0.95).toFixed(1).padStart(6)}  ratio ${(mean(values) / mean(primitive)).toFixed(2)} × get_adcp_capabilities`

/** Inserts 10,000 buys copied from a real one (new ids), straight into the records. */
async function seed(agent: RunningSalesAgent, template: Record<string, unknown>): Promise<number> {
  const records = agent.runtime.deps.storage.records
  const began = performance.now()
  const ids: string[] = []
  for (let index = 0; index < BUYS; index++) {
    const id = `mb_bench_${index}`
    ids.push(id)
    await records.insert('media_buy', id, 'buyer-bench', { ...template, media_buy_id: id })
  }
  return (performance.now() - began) / 1000
}

/** A local receiver answering 200 to every POST; counts them. */
async function localReceiver() {
  let count = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      count++
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"accepted"}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    count: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function outboxRate(
  agent: RunningSalesAgent,
  workers: 1 | 2,
  receiver: { url: string; count(): number },
): Promise<number> {
  const url = receiver.url
  const { storage, key } = agent.runtime.deps
  const extra = workers === 2 ? await openStorage(database!) : undefined
  const senders: WebhookSender[] = [storage, ...(extra ? [extra] : [])].map((store) =>
    createWebhookSender({
      outbox: store.outbox,
      key: key.privateJwk,
      pollIntervalMs: 10,
      concurrency: SENDER_CONCURRENCY,
    }),
  )
  const registration = { channel: 'adcp', config: { url, operation_id: `op_bench_${workers}` } } as const
  for (let index = 0; index < DELIVERIES; index++)
    await senders[0]!.notify(registration, {
      task_id: `task_bench_${index}`,
      task_type: 'create_media_buy',
      status: 'working',
      result: { percentage: index % 100 },
    })
  const before = receiver.count()
  const began = performance.now()
  for (const sender of senders) sender.start()
  // Delivered = answered by the receiver (every request it counts is one outbox entry's attempt).
  while (receiver.count() - before < DELIVERIES) {
    if (performance.now() - began > 300_000) throw new Error('the outbox did not drain in 5 minutes')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const seconds = (performance.now() - began) / 1000
  for (const sender of senders) await sender.stop()
  await extra?.close()
  return DELIVERIES / seconds
}

async function bareRate(url: string, inFlight: number): Promise<number> {
  const body = JSON.stringify({
    idempotency_key: crypto.randomUUID(),
    status: 'working',
    result: { percentage: 1 },
  })
  let next = 0
  const began = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < DELIVERIES)
        await (
          await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        ).text()
    }),
  )
  return DELIVERIES / ((performance.now() - began) / 1000)
}

let database: Parameters<typeof openStorage>[0] | undefined

async function run(name: string, env: Record<string, string>): Promise<void> {
  const parsed = parseEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    TOKENS: `buyer-bench:${TOKEN}:read+write+delete+approve`,
    ALLOW_INSECURE_WEBHOOK_URLS: '1',
    BUY_REVIEW: 'none',
    TEST_KIT_CREDENTIALS: '0',
    ...env,
  })
  database = parsed.database
  const agent = await startSalesAgent(parsed, { reportTickMs: 3_600_000 })
  const receiver = await localReceiver()
  try {
    let client = await mcpClient(agent)
    const call = async (tool: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name: tool, arguments: args })) as {
        isError?: boolean
        structuredContent?: Record<string, unknown>
      }
      if (result.isError) throw new Error(`${tool}: ${JSON.stringify(result.structuredContent)}`)
      return result.structuredContent!
    }
    const first = await call('create_media_buy', buyRequest())
    const template = (await agent.runtime.deps.storage.records.get('media_buy', String(first.media_buy_id)))!
      .body
    await client.close()
    const seeded = await seed(agent, template)
    console.log(`\n${name}: ${BUYS} buys stored in ${seeded.toFixed(1)} s`)
    // The seeding held this thread: let the server close the idle keep-alive sockets (and the client see it)
    // before a fresh connection, or the first call would reuse a socket being reset.
    await new Promise((resolve) => setTimeout(resolve, 6000))
    client = await mcpClient(agent)
    const primitive = await latencies(() => call('get_adcp_capabilities', {}))
    const creates = await latencies(() => call('create_media_buy', buyRequest()))
    const deliveries = await latencies(() =>
      call('get_media_buy_delivery', {
        media_buy_ids: [`mb_bench_${Math.floor(Math.random() * BUYS)}`],
        include_package_daily_breakdown: true,
      }),
    )
    console.log(line('get_adcp_capabilities', primitive, primitive))
    console.log(line('create_media_buy', creates, primitive))
    console.log(line('get_media_buy_delivery', deliveries, primitive))
    await client.close()
    // The agent's own sender would deliver the bench's entries too: only the measured senders run.
    await agent.runtime.deps.sender.stop()
    for (const workers of [1, 2] as const) {
      const bare = await bareRate(receiver.url, SENDER_CONCURRENCY * workers)
      const rate = await outboxRate(agent, workers, receiver)
      console.log(
        `  outbox, ${workers} worker${workers === 2 ? 's' : ' '}        ${rate.toFixed(0).padStart(6)} deliveries/s  bare POST ${bare.toFixed(0).padStart(6)}/s  ratio ${(rate / bare).toFixed(2)}`,
      )
    }
  } finally {
    await receiver.close()
    await agent.close()
  }
}

await run('SQLite', {
  DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'adwire-sales-bench-')), 'bench.sqlite')}`,
})
const postgres = process.env.ADWIRE_TEST_POSTGRES_URL
if (postgres) {
  const schema = `sales_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`
  try {
    await run('PostgreSQL', { DATABASE_URL: postgres, DATABASE_SCHEMA: schema })
  } finally {
    const client = new pg.Client({ connectionString: postgres })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.end()
  }
} else console.log('\nPostgreSQL: skipped (ADWIRE_TEST_POSTGRES_URL is not set)')
