/**
 * The reference receiver's relay into each broker (NATS JetStream, Redis Streams, RabbitMQ) while receiver
 * processes are killed with SIGKILL. Two receiver processes run on one PostgreSQL schema with the same
 * SINK_URL (a fresh stream, key or queue per run); a real sender with a durable SQLite outbox sends N webhooks,
 * half addressed to each process, and every attempt is mirrored (signed afresh) to the other process, so the
 * shared inbox sees each event twice or more and dedupes it. Meanwhile the test kills one process or the other
 * at random moments and restarts it on the same port and schema. Afterwards, once both /health show nothing
 * pending, it reads the broker back and proves:
 * - every event the receivers accepted is in the broker under its message id, sinkMessageId(sender, key):
 *   after dedup on that id nothing is lost;
 * - every message's id is the one of its body's sender and idempotency_key (a repeat is the same message);
 * and prints one line per broker: N, kills, messages, distinct ids, repeats (a publish repeated after a kill
 * between the publish and its mark; JetStream drops those within its duplicate window and the Redis sink's
 * idempotent XADD within its dedupe window, so both show 0; RabbitMQ keeps them).
 *
 * The relay's lease is 3 s here (SINK_LEASE_SECONDS; the service's default is 40 s) and the delivery lease 1 s, so
 * that what a killed process held is taken over within the test. N: ADWIRE_SINK_CRASH_EVENTS (default 60).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { signWebhook } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { brokerTarget } from '@adwire/vitest-config/broker-targets'
import { resolveTestBroker } from '@adwire/vitest-config/brokers'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookSender, sinkMessageId } from '@adwire/webhooks'
import { describe, expect, it } from 'vitest'
import { sellerKey } from './fixtures.js'
import {
  api,
  dropSchema,
  events,
  freshSchema,
  spawnReceiver,
  type ReceiverProcess,
} from './receiver-support.js'

const EVENTS = Number(process.env.ADWIRE_SINK_CRASH_EVENTS ?? 60)
const postgresUrl = await resolveTestPostgresUrl()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

const targets = await Promise.all(
  (['nats', 'redis', 'rabbitmq'] as const).map(async (kind) => ({
    kind,
    url: await resolveTestBroker(kind),
  })),
)

describe.each(targets)('the receiver relaying into $kind while its processes are killed', (broker) => {
  it.skipIf(!broker.url || !postgresUrl)(
    `publishes every accepted webhook at least once under its stable id (${EVENTS} events)`,
    async () => {
      const name = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
      const target = brokerTarget(broker.kind, broker.url!, `sinkcrash.${name}`)
      const schema = freshSchema('adwire_sink_crash')
      const env = {
        DATABASE_URL: postgresUrl!,
        DATABASE_SCHEMA: schema,
        SINK_URL: target.sinkUrl,
        DELIVERY_LEASE_SECONDS: '1',
        SINK_LEASE_SECONDS: '3',
      }
      // One after the other: the first creates the schema, the second finds it.
      const receivers: ReceiverProcess[] = [await spawnReceiver(env, 0)]
      receivers.push(await spawnReceiver(env, 0))
      const ports = receivers.map((receiver) => receiver.port)
      const key = await sellerKey()
      const directory = mkdtempSync(path.join(tmpdir(), 'adwire-sink-crash-'))
      const stores = openSqliteStores({ path: path.join(directory, 'seller-outbox.sqlite') })
      let kills = 0
      try {
        const created = await api(receivers[0]!.url, '/api/registrations', {
          auth: 'rfc9421',
          jwks: key.jwks,
        })
        expect(created.status).toBe(201)
        const id: string = created.body.id
        const targets = ports.map((port) => `http://127.0.0.1:${port}/webhooks/${id}`)

        /** The sender's fetch: each attempt goes to its process and, signed afresh, to the other one. */
        const mirrored: typeof fetch = async (input, init) => {
          const url = String(input)
          const other = url === targets[0] ? targets[1]! : targets[0]!
          const body = new TextDecoder().decode(init?.body as Uint8Array)
          const mirror = (async () => {
            const headers = { 'content-type': 'application/json' }
            const signed = await signWebhook(
              { method: 'POST', url: other, headers, body },
              { key: key.privateJwk },
            )
            const response = await fetch(other, {
              method: 'POST',
              headers: signed.headers as Record<string, string>,
              body,
              signal: AbortSignal.timeout(5_000),
            })
            await response.arrayBuffer()
          })().catch(() => {})
          try {
            return await fetch(input, init)
          } finally {
            await mirror
          }
        }
        const sender = createWebhookSender({
          outbox: stores.outbox,
          key: key.privateJwk,
          fetch: mirrored,
          concurrency: 8,
          pollIntervalMs: 10,
          timeoutMs: 5_000,
          retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.3, maxRetryAfterSeconds: 0.3 },
        })
        try {
          const keys: string[] = []
          for (let index = 0; index < EVENTS; index += 1) {
            const side = index % 2
            keys.push(
              await sender.notify(
                {
                  channel: 'adcp',
                  config: { url: targets[side]!, operation_id: `op_sink_${side}` },
                  destination: `buyer_${side}`,
                },
                {
                  task_id: `task_sink_${index}`,
                  task_type: 'create_media_buy',
                  status: index % 3 ? 'working' : 'completed',
                  ...(index % 3 ? {} : { result: { media_buy_id: `mb_${index}`, packages: [] } }),
                },
              ),
            )
          }
          const drained = async () => (await stores.outbox.pending()).length === 0
          sender.start()

          // Kill one process or the other at random moments until the outbox is empty (twice at least).
          const delays: number[] = []
          const deadline = Date.now() + 60_000 + EVENTS * 60
          while (kills < 2 || !(await drained())) {
            if (Date.now() > deadline) throw new Error(`the outbox did not empty after ${kills} kills`)
            const delay = 50 + Math.floor(Math.random() * 450)
            delays.push(delay)
            await sleep(delay)
            const victim = Math.floor(Math.random() * 2)
            await receivers[victim]!.kill()
            kills += 1
            receivers[victim] = await spawnReceiver(env, ports[victim])
          }
          await sender.stop()

          // Every event accepted (the receivers' events), and the relay done in both processes.
          const accepted = (await events(receivers[0]!.url, id)).map((event) => event.idempotency_key)
          expect(accepted.sort()).toEqual([...keys].sort())
          await until(
            'both receivers to show nothing pending',
            async () => {
              for (const receiver of receivers) {
                const forwarding = (await api(receiver.url, '/health')).body?.forwarding
                if (forwarding?.pending !== 0) return false
              }
              return true
            },
            60_000,
          )

          const published = await target.read()
          const senders = new Set(published.map((message) => message.body.sender))
          expect(senders.size).toBe(1)
          const [sender_] = senders
          for (const message of published)
            expect(message.id).toBe(await sinkMessageId(message.body.sender, message.body.idempotency_key))
          const ids = new Set(published.map((message) => message.id))
          const lost: string[] = []
          for (const idempotencyKey of keys)
            if (!ids.has(await sinkMessageId(sender_!, idempotencyKey))) lost.push(idempotencyKey)
          expect(lost).toEqual([])
          expect(ids.size).toBe(keys.length)
          const counts = new Map<string, number>()
          for (const message of published) counts.set(message.id, (counts.get(message.id) ?? 0) + 1)
          const repeated = [...counts.values()].filter((count) => count > 1).length
          console.log(
            `sink-crash ${broker.kind}: N=${EVENTS} kills=${kills} messages=${published.length} ` +
              `distinct=${ids.size} repeats=${repeated} (extra messages ${published.length - ids.size}) lost=${lost.length}`,
          )
          // The kill moments, so that a failure can be replayed.
          console.info(`sink-crash ${broker.kind}: kills after ${delays.join(', ')} ms`)
        } finally {
          await sender.stop()
        }
      } finally {
        stores.close()
        await Promise.all(receivers.map((receiver) => receiver.kill()))
        await target.drop().catch(() => {})
        await dropSchema(postgresUrl!, schema)
      }
    },
    180_000 + EVENTS * 100,
  )
})
