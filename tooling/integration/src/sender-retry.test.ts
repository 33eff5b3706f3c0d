/**
 * The sender retry contract (webhook-receiver-runner: 5xx then 2xx, a byte-identical idempotency_key, a fresh
 * nonce on every attempt) over the durable outboxes, with an injected clock.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { MemoryReplayStore, verifyWebhook } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookSender, type OutboxStore } from '@adwire/webhooks'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { sellerKey } from './fixtures.js'

const postgresUrl = await resolveTestPostgresUrl()

async function retryContract(outbox: OutboxStore) {
  const key = await sellerKey()
  const received: Array<{ url: string; headers: Record<string, string>; body: Buffer }> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({
        url: `http://${request.headers.host}${request.url}`,
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks),
      })
      response.writeHead(received.length <= 2 ? 503 : 200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let now = 1_776_520_800.25
  const sender = createWebhookSender({ outbox, key: key.privateJwk, now: () => now, random: () => 0.5 })
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
    const idempotencyKey = await sender.notify(
      { channel: 'adcp', config: { url, operation_id: 'op_retry' } },
      { task_id: 'task_r', task_type: 'sync_creatives', status: 'working', result: { percentage: 5 } },
    )
    const replayStore = new MemoryReplayStore()
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await sender.drain()
      const request = received.at(-1)!
      await verifyWebhook(
        { method: 'POST', url: request.url, headers: request.headers, body: new Uint8Array(request.body) },
        { keys: key.jwks, replayStore, now },
      )
      const [pending] = await outbox.pending('op_retry')
      if (pending) now = pending.nextAttemptAt
    }
    expect(received).toHaveLength(3)
    expect(received.every((request) => request.body.equals(received[0]!.body))).toBe(true)
    expect(JSON.parse(received[0]!.body.toString('utf8')).idempotency_key).toBe(idempotencyKey)
    expect(new Set(received.map((request) => request.headers['signature-input'])).size).toBe(3)
    const rows = (await sender.activity('op_retry')).reverse()
    expect(rows.map((row) => [row.idempotency_key, row.status, row.http_status_code, row.attempt])).toEqual([
      [idempotencyKey, 'failed', 503, 1],
      [idempotencyKey, 'failed', 503, 2],
      [idempotencyKey, 'success', 200, 3],
    ])
    // Back-off 2 s then 4 s, each reduced by jitter 0.5 × random 0.5.
    expect(rows.map((row) => row.at - rows[0]!.at)).toEqual([0, 1.5, 4.5])
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe('the retry contract on durable outboxes', () => {
  it('SQLite', async () => {
    const stores = openSqliteStores({
      path: path.join(mkdtempSync(path.join(tmpdir(), 'adwire-retry-')), 'o.db'),
    })
    try {
      await retryContract(stores.outbox)
    } finally {
      stores.close()
    }
  })

  it.skipIf(!postgresUrl)('PostgreSQL', async () => {
    const schema = `adwire_retry_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const stores = await openPostgresStores({ connectionString: postgresUrl!, schema })
    try {
      await retryContract(stores.outbox)
    } finally {
      await stores.close()
      const client = new pg.Client({ connectionString: postgresUrl! })
      await client.connect()
      await client.query(`drop schema if exists ${schema} cascade`)
      await client.end()
    }
  })
})
