/**
 * The sender's outbox on durable stores: an event accepted by `notify` survives a SIGKILL of the seller
 * process (before or during its delivery) and a new sender on the same store delivers it, with the same
 * bytes and key and a fresh signature.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MemoryReplayStore, verifyWebhook, type Jwks } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookSender, type OutboxStore } from '@adwire/webhooks'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { sellerKey } from './fixtures.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const tsx = createRequire(import.meta.url).resolve('tsx')
const postgresUrl = await resolveTestPostgresUrl()

interface Received {
  url: string
  headers: Record<string, string>
  body: Buffer
}

/** A buyer endpoint on 127.0.0.1 that holds the first `hold` requests unanswered and answers 200 after. */
async function buyerEndpoint(hold = 0) {
  const received: Received[] = []
  const held: ServerResponse[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({
        url: `http://${request.headers.host}${request.url}`,
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks),
      })
      if (received.length <= hold) held.push(response)
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const waitFor = async (count: number, ms = 20_000) => {
    const deadline = Date.now() + ms
    while (received.length < count && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(received.length).toBeGreaterThanOrEqual(count)
  }
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/seller`,
    received,
    waitFor,
    close,
  }
}

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** Starts the child; resolves with its idempotency key once it printed it, and with how it exited. */
function startChild(config: unknown) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-sender-crash-')), 'config.json')
  writeFileSync(file, JSON.stringify(config))
  const child = spawn(process.execPath, ['--import', tsx, path.join(here, 'sender-crash-child.ts'), file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const enqueued = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      const match = /enqueued (\S+)\n/.exec(stdout)
      if (match) resolve(match[1]!)
    })
    child.on('exit', () => reject(new Error(`child exited before enqueueing: ${stdout}${stderr}`)))
  })
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  )
  return { child, enqueued, exited }
}

type StoreConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema: string }
interface Opened {
  outbox: OutboxStore
  close(): void | Promise<void>
}

async function verifyAll(received: Received[], jwks: Jwks) {
  const replayStore = new MemoryReplayStore()
  for (const request of received)
    await verifyWebhook(
      { method: 'POST', url: request.url, headers: request.headers, body: new Uint8Array(request.body) },
      { keys: jwks, replayStore },
    )
}

async function crashBeforeDelivery(store: StoreConfig, open: () => Promise<Opened>) {
  const key = await sellerKey()
  const buyer = await buyerEndpoint()
  try {
    const run = startChild({
      store,
      key: key.privateJwk,
      url: buyer.url,
      mode: 'enqueue',
      leaseSeconds: 5,
      timeoutMs: 2_000,
    })
    const idempotencyKey = await run.enqueued
    expect(await run.exited).toBe('SIGKILL')
    expect(buyer.received).toHaveLength(0)

    const stores = await open()
    const sender = createWebhookSender({ outbox: stores.outbox, key: key.privateJwk, pollIntervalMs: 50 })
    sender.start()
    try {
      await buyer.waitFor(1)
    } finally {
      await sender.stop()
    }
    const body = JSON.parse(buyer.received[0]!.body.toString('utf8'))
    expect(body).toMatchObject({
      idempotency_key: idempotencyKey,
      operation_id: 'op_crash',
      context: { run: 'crash' },
    })
    await verifyAll(buyer.received, key.jwks)
    expect(
      (await sender.activity('op_crash')).map((row) => [row.idempotency_key, row.status, row.attempt]),
    ).toEqual([[idempotencyKey, 'success', 1]])
    expect(await stores.outbox.pending()).toEqual([])
    await stores.close()
  } finally {
    await buyer.close()
  }
}

async function crashDuringDelivery(store: StoreConfig, open: () => Promise<Opened>) {
  const key = await sellerKey()
  const buyer = await buyerEndpoint(1)
  const lease = { leaseSeconds: 2, timeoutMs: 1_500 }
  try {
    const run = startChild({ store, key: key.privateJwk, url: buyer.url, mode: 'inflight', ...lease })
    const idempotencyKey = await run.enqueued
    await buyer.waitFor(1)
    run.child.kill('SIGKILL')
    expect(await run.exited).toBe('SIGKILL')

    const stores = await open()
    const sender = createWebhookSender({
      outbox: stores.outbox,
      key: key.privateJwk,
      pollIntervalMs: 50,
      ...lease,
    })
    const started = Date.now()
    sender.start()
    try {
      await buyer.waitFor(2)
    } finally {
      await sender.stop()
    }
    // Not before the dead worker's lease ended (it was taken within the last two seconds).
    expect(Date.now() - started).toBeGreaterThan(500)
    const [first, second] = buyer.received
    expect(second!.body.equals(first!.body)).toBe(true)
    expect(JSON.parse(second!.body.toString('utf8')).idempotency_key).toBe(idempotencyKey)
    expect(second!.headers['signature']).not.toBe(first!.headers['signature'])
    await verifyAll(buyer.received, key.jwks)
    expect((await sender.activity('op_crash')).map((row) => [row.status, row.http_status_code])).toEqual([
      ['success', 200],
    ])
    await stores.close()
  } finally {
    await buyer.close()
  }
}

async function withPostgresSchema(run: (store: StoreConfig, open: () => Promise<Opened>) => Promise<void>) {
  const schema = `adwire_sender_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  try {
    await run({ kind: 'postgres', url: postgresUrl!, schema }, () =>
      openPostgresStores({ connectionString: postgresUrl!, schema }),
    )
  } finally {
    const client = new pg.Client({ connectionString: postgresUrl! })
    await client.connect()
    await client.query(`drop schema if exists ${schema} cascade`)
    await client.end()
  }
}

const sqliteFile = () => path.join(mkdtempSync(path.join(tmpdir(), 'adwire-sender-')), 'seller.sqlite')

describe('a sender killed with SIGKILL loses nothing', () => {
  it('SQLite: an event enqueued, never attempted, is delivered by a new sender', async () => {
    const file = sqliteFile()
    await crashBeforeDelivery({ kind: 'sqlite', path: file }, async () => openSqliteStores({ path: file }))
  })

  it('SQLite: an attempt in flight is delivered again once its lease ends', async () => {
    const file = sqliteFile()
    await crashDuringDelivery({ kind: 'sqlite', path: file }, async () => openSqliteStores({ path: file }))
  })

  it.skipIf(!postgresUrl)('PostgreSQL: enqueued, killed, delivered after restart', async () => {
    await withPostgresSchema(crashBeforeDelivery)
  })

  it.skipIf(!postgresUrl)('PostgreSQL: killed mid-attempt, delivered after the lease', async () => {
    await withPostgresSchema(crashDuringDelivery)
  })
})
