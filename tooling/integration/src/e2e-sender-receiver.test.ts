/**
 * End to end over HTTP on 127.0.0.1: the seller-side sender (SQLite outbox, RFC 9421 signatures, its default
 * retry policy on an injected clock) delivers a task's working, input-required and completed webhooks and a
 * media buy's scheduled and final delivery reports to the reference receiver service (apps/receiver, SQLite)
 * through a small proxy that answers 503 to the first two attempts of every event and then passes the
 * request through untouched.
 *
 * It proves: every retry carries the same idempotency_key and byte-identical body with a fresh signature
 * nonce; the receiver verifies each passed-through attempt and publishes each event exactly once (events API:
 * publications 1, one event per fire); webhook_activity lists every attempt (503, 503, 200 per event, in
 * order); the outbox is empty afterwards.
 */
import { mkdtempSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseEnv, startReceiver, type RunningReceiver } from '@adwire/app-receiver'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createWebhookSender, type WebhookRegistration } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sellerKey, type SellerKey } from './fixtures.js'
import { ADMIN_TOKEN, api, events } from './receiver-support.js'

/** One webhook request as the proxy saw it, and what it answered. */
interface Seen {
  readonly idempotencyKey: string
  readonly body: string
  readonly nonce: string | undefined
  readonly signature: string | undefined
  /** 503 from the proxy, or the receiver's own status. */
  status: number
  /** The receiver's answer body, when the request reached it. */
  answer?: string
}

const FAILURES_PER_EVENT = 2

/**
 * An HTTP proxy in front of the receiver: a webhook POST is answered 503 by the proxy itself for the first
 * two attempts of its idempotency_key, then forwarded byte for byte (Host kept, so the signed `@authority`
 * and `@target-uri` still match); everything else is forwarded as is.
 */
async function startFlakyProxy(target: () => URL) {
  const seen: Seen[] = []
  const attempts = new Map<string, number>()
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      let record: Seen | undefined
      if (incoming.method === 'POST' && incoming.url?.startsWith('/webhooks/')) {
        const idempotencyKey = String(JSON.parse(body.toString('utf8')).idempotency_key)
        const attempt = (attempts.get(idempotencyKey) ?? 0) + 1
        attempts.set(idempotencyKey, attempt)
        record = {
          idempotencyKey,
          body: body.toString('utf8'),
          nonce: /;nonce="([^"]+)"/.exec(String(incoming.headers['signature-input']))?.[1],
          signature: header(incoming.headers, 'signature'),
          status: 0,
        }
        seen.push(record)
        if (attempt <= FAILURES_PER_EVENT) {
          record.status = 503
          outgoing.writeHead(503, { 'content-type': 'text/plain' }).end('try again')
          return
        }
      }
      const upstream = httpRequest(
        {
          host: target().hostname,
          port: target().port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        (response) => {
          const answer: Buffer[] = []
          response.on('data', (chunk: Buffer) => answer.push(chunk))
          response.on('end', () => {
            if (record) {
              record.status = response.statusCode ?? 0
              record.answer = Buffer.concat(answer).toString('utf8')
            }
            outgoing.writeHead(response.statusCode ?? 502, response.headers).end(Buffer.concat(answer))
          })
        },
      )
      upstream.on('error', (error) => outgoing.writeHead(502).end(String(error)))
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

const deliveryReport = (type: 'scheduled' | 'final', extra: Record<string, unknown> = {}) => ({
  result: {
    notification_type: type,
    reporting_period: { start: '2026-04-17T00:00:00Z', end: '2026-04-17T23:59:59Z' },
    currency: 'USD',
    media_buy_deliveries: [
      {
        media_buy_id: 'mb_e2e',
        status: type === 'final' ? 'completed' : 'active',
        totals: { impressions: 120_000, spend: 1_500 },
        by_package: [],
      },
    ],
    ...extra,
  },
})

describe('sender → flaky proxy → receiver service, over HTTP on 127.0.0.1', () => {
  let key: SellerKey
  let receiver: RunningReceiver
  let proxy: Awaited<ReturnType<typeof startFlakyProxy>>
  let registrationId: string
  let webhookUrl: string
  // One clock for the seller and the buyer, so that the sender's default back-off (2 s, then 4 s) is walked
  // through without waiting and the receiver checks `created` against the same time.
  let now = Math.floor(Date.now() / 1000)
  const clock = () => now
  const directory = mkdtempSync(path.join(tmpdir(), 'adwire-e2e-'))

  beforeAll(async () => {
    key = await sellerKey()
    proxy = await startFlakyProxy(() => new URL(receiver.url))
    receiver = await startReceiver(
      parseEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(directory, 'receiver.sqlite')}`,
        ADMIN_TOKEN,
        // The seller is given (and signs) the proxy's address, as behind any reverse proxy.
        PUBLIC_URL: proxy.url,
      }),
      { now: clock, hubPollMs: 100 },
    )
    const created = await api(receiver.url, '/api/registrations', {
      auth: 'rfc9421',
      jwks: key.jwks,
      label: 'seller e2e',
    })
    expect(created.status).toBe(201)
    registrationId = created.body.id
    webhookUrl = created.body.url
    expect(webhookUrl).toBe(`${proxy.url}/webhooks/${registrationId}`)
  })

  afterAll(async () => {
    await receiver?.close()
    await proxy?.close()
  })

  it('retries each event through two 503s with the same key and bytes and fresh nonces; each is published once', async () => {
    const stores = openSqliteStores({ path: path.join(directory, 'seller-outbox.sqlite') })
    const sender = createWebhookSender({ outbox: stores.outbox, key: key.privateJwk, now: clock })
    try {
      const destination = 'buyer_acme'
      const registration = (operationId: string): WebhookRegistration => ({
        channel: 'adcp',
        config: { url: webhookUrl, operation_id: operationId },
        destination,
        context: { correlation: `corr_${operationId}` },
      })
      const task = sender.task(registration('op_create_mb'), {
        task_id: 'task_create_mb',
        task_type: 'create_media_buy',
        status: 'submitted',
      })
      const buy = sender.mediaBuy({
        mediaBuyId: 'mb_e2e',
        notifications: registration('op_create_mb'),
        reporting: registration('op_reporting_mb'),
      })

      /** Fires one event, then lets the sender attempt it until it is delivered, moving the clock to each retry. */
      const fire = async (event: () => Promise<string | undefined>) => {
        now += 60
        const idempotencyKey = await event()
        expect(idempotencyKey).toBeDefined()
        for (let attempt = 1; attempt <= FAILURES_PER_EVENT + 1; attempt += 1) {
          await sender.drain()
          const pending = await stores.outbox.pending(destination)
          if (attempt <= FAILURES_PER_EVENT) {
            expect(pending.map((entry) => [entry.idempotencyKey, entry.attempts])).toEqual([
              [idempotencyKey, attempt],
            ])
            now = pending[0]!.nextAttemptAt
          } else {
            expect(pending).toEqual([])
          }
        }
        return idempotencyKey!
      }

      const keys = [
        await fire(() => task.update('working', { result: { percentage: 30 } })),
        await fire(() => task.update('input-required', { message: 'approve the flight dates' })),
        await fire(() =>
          task.update('completed', { result: { media_buy_id: 'mb_e2e', buyer_ref: 'ref_1', packages: [] } }),
        ),
        await fire(() => buy.report(deliveryReport('scheduled', { sequence_number: 1 }))),
        await fire(async () => buy.finish('completed', deliveryReport('final'))),
      ]
      expect(new Set(keys).size).toBe(5)

      // What crossed the wire: three attempts per event, in order, 503, 503 then the receiver's 200.
      expect(proxy.seen.map((request) => request.idempotencyKey)).toEqual(keys.flatMap((k) => [k, k, k]))
      expect(proxy.seen.map((request) => request.status)).toEqual(keys.flatMap(() => [503, 503, 200]))
      expect(
        proxy.seen.filter((request) => request.status === 200).map((request) => JSON.parse(request.answer!)),
      ).toEqual(keys.map(() => ({ status: 'accepted' })))
      for (const idempotencyKey of keys) {
        const attempts = proxy.seen.filter((request) => request.idempotencyKey === idempotencyKey)
        // Serialised once: every retry sends the same bytes, so the same key.
        expect(new Set(attempts.map((request) => request.body)).size).toBe(1)
        expect(JSON.parse(attempts[0]!.body)).toMatchObject({ idempotency_key: idempotencyKey })
      }
      // Signed anew every time: fifteen attempts, fifteen nonces and signatures.
      expect(proxy.seen.every((request) => typeof request.nonce === 'string')).toBe(true)
      expect(new Set(proxy.seen.map((request) => request.nonce)).size).toBe(proxy.seen.length)
      expect(new Set(proxy.seen.map((request) => request.signature)).size).toBe(proxy.seen.length)

      // The payloads, in firing order.
      const bodies = keys.map(
        (idempotencyKey) =>
          JSON.parse(proxy.seen.find((request) => request.idempotencyKey === idempotencyKey)!.body) as Record<
            string,
            // eslint-disable-next-line @typescript-eslint/no-explicit-any
            any
          >,
      )
      expect(bodies.map((body) => [body.operation_id, body.task_type, body.status])).toEqual([
        ['op_create_mb', 'create_media_buy', 'working'],
        ['op_create_mb', 'create_media_buy', 'input-required'],
        ['op_create_mb', 'create_media_buy', 'completed'],
        ['op_reporting_mb', 'media_buy_delivery', 'completed'],
        ['op_reporting_mb', 'media_buy_delivery', 'completed'],
      ])
      expect(bodies.map((body) => body.context)).toEqual([
        ...Array(3).fill({ correlation: 'corr_op_create_mb' }),
        ...Array(2).fill({ correlation: 'corr_op_reporting_mb' }),
      ])
      expect(bodies[3]!.result).toMatchObject({ notification_type: 'scheduled', sequence_number: 1 })
      expect(bodies[3]!.result).not.toHaveProperty('aggregated_totals')
      expect(bodies[4]!.result).toMatchObject({ notification_type: 'final' })

      // The receiver published each event exactly once, and only those.
      const published = await events(receiver.url, registrationId)
      expect(published.map((event) => event.idempotency_key)).toEqual(keys)
      expect(published.map((event) => event.publications)).toEqual([1, 1, 1, 1, 1])
      expect(published.map((event) => [event.operation_id, event.status])).toEqual(
        bodies.map((body) => [body.operation_id, body.status]),
      )
      const failures = await api(receiver.url, `/api/failures?registration=${registrationId}`)
      expect(failures.body).toEqual({ failures: [] })

      // webhook_activity: every attempt, oldest first.
      const activity = (await sender.activity(destination, 100)).reverse()
      expect(
        activity.map((row) => [row.idempotency_key, row.attempt, row.status, row.http_status_code]),
      ).toEqual(
        keys.flatMap((idempotencyKey) => [
          [idempotencyKey, 1, 'failed', 503],
          [idempotencyKey, 2, 'failed', 503],
          [idempotencyKey, 3, 'success', 200],
        ]),
      )
      expect(activity.filter((row) => row.status === 'failed').map((row) => row.error_message)).toEqual(
        keys.flatMap(() => ['HTTP 503', 'HTTP 503']),
      )
      expect(await stores.outbox.pending()).toEqual([])
    } finally {
      await sender.stop()
      stores.close()
    }
  })
})
