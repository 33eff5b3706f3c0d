/**
 * Two reference receiver PROCESSES (`node apps/receiver/dist/server.js`) on one PostgreSQL schema, behind
 * different ports on 127.0.0.1.
 *
 * It proves:
 * - a burst of distinct events, each delivered to both processes at once (every delivery signed anew, 503s
 *   retried as a seller retries them), is published exactly once per event: one `accepted` and one
 *   `duplicate` answer per event, and each idempotency_key once in the events API with publications 1;
 * - a receiver killed with SIGKILL in the middle of a real sender's burst, then restarted on the same port,
 *   loses nothing: the sender's attempts fail with connection errors while it is down, it retries from its
 *   durable outbox until the outbox is empty, and every event is then published exactly once.
 *
 * The kill lands between deliveries: the sender's fetch holds new attempts for the moment of the kill and lets
 * the ones on the wire finish, so that no delivery is inside the receiver when it dies. A delivery caught
 * there would hold its dedup claim for the core's 30 s lease (retries answer 503 until then), which this
 * fast test does not wait for; crash.test.ts kills a receiver inside its publish callback for that case.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { signWebhook } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookSender } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { envelope, sellerKey, type SellerKey } from './fixtures.js'
import {
  api,
  dropSchema,
  events,
  freshSchema,
  spawnReceiver,
  type ReceiverEvent,
  type ReceiverProcess,
} from './receiver-support.js'

const postgresUrl = await resolveTestPostgresUrl()
const schema = freshSchema('adwire_e2e_two')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 20 ms until it returns true; throws after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

function expectEachOnce(published: readonly ReceiverEvent[], keys: readonly string[]) {
  expect(published.map((event) => event.idempotency_key).sort()).toEqual([...keys].sort())
  expect(published.filter((event) => event.publications !== 1)).toEqual([])
}

describe.skipIf(!postgresUrl)('two receiver processes on one PostgreSQL schema', () => {
  let key: SellerKey
  let first: ReceiverProcess
  let second: ReceiverProcess
  const env = () => ({ DATABASE_URL: postgresUrl!, DATABASE_SCHEMA: schema })

  beforeAll(async () => {
    key = await sellerKey()
    // One after the other: the first creates the schema, the second finds it.
    first = await spawnReceiver(env())
    second = await spawnReceiver(env())
    expect(first.port).not.toBe(second.port)
  })

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()])
    if (postgresUrl) await dropSchema(postgresUrl, schema)
  })

  it('publish each event of a burst once when every event reaches both processes at once', async () => {
    const created = await api(first.url, '/api/registrations', { auth: 'rfc9421', jwks: key.jwks })
    expect(created.status).toBe(201)
    const id: string = created.body.id
    // Registered through the first, known to the second (one keyspace).
    expect((await api(second.url, `/api/registrations/${id}`)).status).toBe(200)

    const burst = Array.from({ length: 60 }, (_, index) =>
      envelope({
        operation_id: `op_burst_${index % 5}`,
        status: ['working', 'input-required', 'completed'][index % 3],
        timestamp: new Date().toISOString(),
      }),
    )
    /** Posts `payload` to `target`, signed afresh for every attempt, until it answers 200 (503: in flight elsewhere). */
    const deliver = async (target: string, payload: object): Promise<string> => {
      const body = JSON.stringify(payload)
      for (let attempt = 1; attempt <= 200; attempt += 1) {
        const signed = await signWebhook(
          { method: 'POST', url: target, headers: { 'content-type': 'application/json' }, body },
          { key: key.privateJwk },
        )
        const response = await fetch(target, {
          method: 'POST',
          headers: signed.headers as Record<string, string>,
          body,
        })
        const answer = (await response.json()) as { status?: string; error?: { code?: string } }
        if (response.status === 200) return answer.status!
        // The only other answer: the other process is publishing this very event right now.
        expect({ status: response.status, code: answer.error?.code }).toEqual({
          status: 503,
          code: 'delivery_in_flight',
        })
        await sleep(10)
      }
      throw new Error(`no 200 from ${target} after 200 attempts`)
    }
    const targets = [first, second].map((receiver) => `${receiver.url}/webhooks/${id}`)
    const outcomes = await Promise.all(
      burst.map(async (payload) =>
        (await Promise.all(targets.map((target) => deliver(target, payload)))).sort(),
      ),
    )
    // One process published each event; the other found it done.
    expect(outcomes).toEqual(burst.map(() => ['accepted', 'duplicate']))

    const keys = burst.map((payload) => payload.idempotency_key)
    for (const receiver of [first, second]) expectEachOnce(await events(receiver.url, id), keys)
  })

  it('lose nothing when a receiver is killed (SIGKILL) mid-burst and restarted on the same port', async () => {
    // Registered through the second; the sender is given the first's address.
    const created = await api(second.url, '/api/registrations', { auth: 'rfc9421', jwks: key.jwks })
    expect(created.status).toBe(201)
    const id: string = created.body.id
    const target = `${first.url}/webhooks/${id}`
    const port = first.port

    const BURST = 90
    const KILL_AFTER = 30
    let delivered = 0
    let refused = 0
    let closeGate: (() => void) | undefined
    let gate: Promise<void> | undefined
    const gateClosed = new Promise<void>((resolve) => (closeGate = resolve))
    let openGate = () => {}
    const onTheWire = new Set<Promise<unknown>>()
    /** The sender's fetch: a plain fetch that, at the kill, holds new attempts and lets the ones on the wire end. */
    const gatedFetch: typeof fetch = async (input, init) => {
      while (gate) await gate
      const attempt = (async () => {
        const response = await fetch(input, init)
        const body = [101, 204, 205, 304].includes(response.status) ? null : await response.arrayBuffer()
        if (response.status === 200 && ++delivered === KILL_AFTER) {
          gate = new Promise((resolve) => (openGate = () => ((gate = undefined), resolve())))
          closeGate?.()
        }
        return new Response(body, response)
      })()
      onTheWire.add(attempt)
      try {
        return await attempt
      } catch (error) {
        refused += 1
        throw error
      } finally {
        onTheWire.delete(attempt)
      }
    }

    const directory = mkdtempSync(path.join(tmpdir(), 'adwire-e2e-kill-'))
    const stores = openSqliteStores({ path: path.join(directory, 'seller-outbox.sqlite') })
    const sender = createWebhookSender({
      outbox: stores.outbox,
      key: key.privateJwk,
      fetch: gatedFetch,
      concurrency: 8,
      pollIntervalMs: 10,
      timeoutMs: 5_000,
      // Short delays so that the test is fast; Retry-After capped likewise.
      retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.25, maxRetryAfterSeconds: 0.25 },
    })
    try {
      const registration = {
        channel: 'adcp',
        config: { url: target, operation_id: 'op_kill' },
        destination: 'buyer_kill',
      } as const
      const keys: string[] = []
      for (let index = 0; index < BURST; index += 1)
        keys.push(
          await sender.notify(registration, {
            task_id: `task_kill_${index}`,
            task_type: 'create_media_buy',
            status: index % 2 ? 'working' : 'completed',
            ...(index % 2 ? {} : { result: { media_buy_id: `mb_${index}`, packages: [] } }),
          }),
        )
      sender.start()

      await gateClosed
      await Promise.allSettled([...onTheWire])
      await first.kill()
      expect(await first.exited).toBe('SIGKILL')
      const atKill = (await events(second.url, id)).length
      expect(atKill).toBeGreaterThanOrEqual(KILL_AFTER)
      expect(atKill).toBeLessThan(BURST)

      // The held attempts and the next ones go to a dead port.
      openGate()
      await until('attempts refused by the dead receiver', () => refused >= 3)
      first = await spawnReceiver(env(), port)
      expect(first.port).toBe(port)

      await until('the outbox to empty', async () => (await stores.outbox.pending()).length === 0)
      await sender.stop()

      for (const receiver of [first, second]) expectEachOnce(await events(receiver.url, id), keys)
      const activity = await sender.activity('buyer_kill', 10_000)
      const successes = activity.filter((row) => row.status === 'success')
      expect(successes.map((row) => row.idempotency_key).sort()).toEqual([...keys].sort())
      expect(successes.every((row) => row.http_status_code === 200)).toBe(true)
      expect(activity.filter((row) => row.status === 'connection_error').length).toBeGreaterThanOrEqual(3)
      expect(activity.filter((row) => row.status === 'failed')).toEqual([])
    } finally {
      openGate()
      await sender.stop()
      stores.close()
    }
  })
})
