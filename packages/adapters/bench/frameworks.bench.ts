/**
 * Webhook verification overhead per framework, against the bare core in the same run (architecture.md: benches
 * report ratios, never absolute targets). Every stack runs the same receiver (memory stores) on the same
 * pre-signed deliveries (about 2 KB, fresh key and nonce each), sent one at a time over a kept-alive connection:
 *
 * - `core`: `receiver.handle(request)` in process, no HTTP at all;
 * - `http`: a bare node:http server that buffers the body and builds the `Request` by hand (no adapter);
 * - `adapters/node`, `express`, `fastify`: this package's adapters; `hono`: `c.req.raw` on @hono/node-server.
 *
 * Rounds alternate the stacks and the median is reported: the development machines are shared.
 *
 *   pnpm --filter @adwire/adapters bench            (node --import tsx bench/frameworks.bench.ts)
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import {
  generateSigningKey,
  MemoryReplayStore,
  signWebhook,
  type AdcpJwk,
  type Jwks,
} from '@adwire/http-signatures'
import { createWebhookReceiver, MemoryClaimStore, MemoryConvergenceStore } from '@adwire/webhooks'
import express from 'express'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { webhookHandler } from '../src/express.js'
import { adcpWebhooks } from '../src/fastify.js'
import { nodeHandler } from '../src/node.js'

const ROUNDS = 5
const PER_ROUND = 300
const PATH = '/webhooks/adcp'

function newReceiver(jwks: Jwks) {
  return createWebhookReceiver({
    registration: () => ({ id: 'adcp', auth: { mode: 'rfc9421', keys: jwks }, shape: 'mcp' }),
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    publish: async () => {},
  })
}
type Handle = ReturnType<typeof newReceiver>['handle']

const body = () =>
  JSON.stringify({
    idempotency_key: `whk_${crypto.randomUUID()}`,
    operation_id: 'op_bench',
    task_id: `task_${crypto.randomUUID()}`,
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: '2026-04-18T14:00:00Z',
    result: {
      media_buy_id: 'mb_001',
      packages: Array.from({ length: 14 }, (_, index) => ({ package_id: `pkg_${index}`, status: 'active' })),
    },
  })

async function deliveries(key: AdcpJwk, url: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const payload = body()
      const signed = await signWebhook(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: payload },
        { key },
      )
      return { headers: signed.headers, body: payload }
    }),
  )
}

const listening = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  )

/** The stacks: each returns its base URL and a way to stop it. */
const stacks: Record<string, (handle: Handle) => Promise<{ base: string; stop: () => Promise<unknown> }>> = {
  http: async (handle) => {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', async () => {
        const request = new Request(`http://${req.headers.host}${req.url}`, {
          method: req.method,
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks),
        })
        const response = await handle(request)
        res.writeHead(response.status, Object.fromEntries(response.headers)).end(await response.text())
      })
    })
    return { base: await listening(server), stop: () => new Promise((resolve) => server.close(resolve)) }
  },
  'adapters/node': async (handle) => {
    const server = createServer(nodeHandler(handle))
    return { base: await listening(server), stop: () => new Promise((resolve) => server.close(resolve)) }
  },
  express: async (handle) => {
    const app = express()
    app.post(PATH, webhookHandler(handle))
    const server = createServer(app)
    return { base: await listening(server), stop: () => new Promise((resolve) => server.close(resolve)) }
  },
  fastify: async (handle) => {
    const app = Fastify()
    await app.register(adcpWebhooks, { path: PATH, handle })
    return { base: await app.listen({ port: 0, host: '127.0.0.1' }), stop: () => app.close() }
  },
  hono: async (handle) => {
    const app = new Hono()
    app.post(PATH, (c) => handle(c.req.raw))
    const base = await new Promise<string>((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
        resolve(`http://127.0.0.1:${info.port}`),
      )
    })
    return { base, stop: async () => {} }
  },
}

const key = await generateSigningKey({ alg: 'ed25519', kid: 'bench-1', adcpUse: 'webhook-signing' })
const running = new Map<string, { base: string; stop: () => Promise<unknown>; handle: Handle }>()
for (const [name, start] of Object.entries(stacks)) {
  const handle = newReceiver(key.jwks).handle
  running.set(name, { ...(await start(handle)), handle })
}
const core = newReceiver(key.jwks).handle

/** Microseconds per delivery for one round of one stack (signing done beforehand, not timed). */
async function round(name: string): Promise<number> {
  if (name === 'core') {
    const signed = await deliveries(key.privateJwk, `https://buyer.example${PATH}`, PER_ROUND)
    const start = performance.now()
    for (const delivery of signed) {
      const response = await core(
        new Request(`https://buyer.example${PATH}`, {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        }),
      )
      if (response.status !== 200) throw new Error(`core answered ${response.status}`)
      await response.arrayBuffer()
    }
    return ((performance.now() - start) * 1000) / PER_ROUND
  }
  const stack = running.get(name)!
  const signed = await deliveries(key.privateJwk, `${stack.base}${PATH}`, PER_ROUND)
  const start = performance.now()
  for (const delivery of signed) {
    const response = await fetch(`${stack.base}${PATH}`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    })
    if (response.status !== 200)
      throw new Error(`${name} answered ${response.status}: ${await response.text()}`)
    await response.arrayBuffer()
  }
  return ((performance.now() - start) * 1000) / PER_ROUND
}

const names = ['core', ...running.keys()]
const times = new Map<string, number[]>(names.map((name) => [name, []]))
for (const name of names) await round(name) // warm-up
for (let index = 0; index < ROUNDS; index += 1) {
  for (const name of names) times.get(name)!.push(await round(name))
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const coreUs = median(times.get('core')!)
const httpUs = median(times.get('http')!)
console.log(`webhook delivery, median of ${ROUNDS} rounds × ${PER_ROUND} (sequential, keep-alive)`)
console.log('stack            µs/delivery  × core   × bare http')
for (const name of names) {
  const us = median(times.get(name)!)
  console.log(
    `${name.padEnd(16)} ${us.toFixed(0).padStart(11)}  ${(us / coreUs).toFixed(2).padStart(5)}  ${(us / httpUs).toFixed(2).padStart(10)}`,
  )
}
for (const stack of running.values()) await stack.stop()
process.exit(0)
