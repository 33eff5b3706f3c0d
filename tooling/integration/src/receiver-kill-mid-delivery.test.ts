/**
 * The reference receiver service killed with SIGKILL while deliveries are inside it, fed by a real sender
 * with a durable outbox. The dangerous window is between the event row being written and the receiver core
 * acknowledging the delivery: the dedup claim is then still open, so a retry takes the event over once the
 * lease (1 s here, DELIVERY_LEASE_SECONDS) has run out. With the transactional inbox (the service's default)
 * the row is written in the delivery's own transaction, so there is no such window. It proves:
 * - killed right after writing its N-th event (a fault-injected build of the service), on SQLite and on
 *   PostgreSQL, in both publication modes: after a restart every event is published exactly once
 *   (publications 1); with claim → publish → complete the takeover is logged as a recovered unacknowledged
 *   publication, with the inbox the killed transaction left nothing and the retry is a first delivery;
 * - killed three times at random moments of a burst: nothing is lost and nothing is published twice.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { openSqliteStores } from '@adwire/store-sqlite'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookSender } from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { sellerKey, type SellerKey } from './fixtures.js'
import {
  api,
  dropSchema,
  events,
  freshSchema,
  spawnReceiver,
  type ReceiverProcess,
} from './receiver-support.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const CRASH_CHILD = path.join(here, 'receiver-service-crash-child.ts')
const postgresUrl = await resolveTestPostgresUrl()
const schemas: string[] = []

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

/** A seller: a real sender on its own SQLite outbox, with short retry delays. */
function seller(key: SellerKey) {
  const directory = mkdtempSync(path.join(tmpdir(), 'adwire-kill-seller-'))
  const stores = openSqliteStores({ path: path.join(directory, 'outbox.sqlite') })
  const sender = createWebhookSender({
    outbox: stores.outbox,
    key: key.privateJwk,
    concurrency: 4,
    pollIntervalMs: 10,
    timeoutMs: 5_000,
    retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.3, maxRetryAfterSeconds: 0.3 },
  })
  return {
    sender,
    async burst(target: string, count: number, destination: string): Promise<string[]> {
      const keys: string[] = []
      for (let index = 0; index < count; index += 1) {
        keys.push(
          await sender.notify(
            { channel: 'adcp', config: { url: target, operation_id: `op_${destination}` }, destination },
            {
              task_id: `task_${destination}_${index}`,
              task_type: 'create_media_buy',
              status: index % 2 ? 'working' : 'completed',
              ...(index % 2 ? {} : { result: { media_buy_id: `mb_${index}`, packages: [] } }),
            },
          ),
        )
      }
      return keys
    },
    drained: async () => (await stores.outbox.pending()).length === 0,
    async close() {
      await sender.stop()
      stores.close()
    },
  }
}

async function expectEachOnce(receiver: ReceiverProcess, registration: string, keys: readonly string[]) {
  const published = await events(receiver.url, registration)
  expect(published.map((event) => event.idempotency_key).sort()).toEqual([...keys].sort())
  expect(published.filter((event) => event.publications !== 1)).toEqual([])
}

type Database = { name: string; env: () => Record<string, string> }
const sqlite: Database = {
  name: 'SQLite',
  env: () => ({
    DATABASE_URL: `sqlite:${path.join(mkdtempSync(path.join(tmpdir(), 'adwire-kill-')), 'receiver.sqlite')}`,
  }),
}
const postgres: Database = {
  name: 'PostgreSQL',
  env: () => {
    const schema = freshSchema('adwire_kill')
    schemas.push(schema)
    return { DATABASE_URL: postgresUrl!, DATABASE_SCHEMA: schema }
  },
}

afterAll(async () => {
  if (postgresUrl) for (const schema of schemas) await dropSchema(postgresUrl, schema)
})

const cases = [sqlite, ...(postgresUrl ? [postgres] : [])].flatMap((database) =>
  (['claims', 'inbox'] as const).map((publication) => ({ database, publication, name: database.name })),
)

describe.each(cases)(
  'a receiver service killed between writing an event and acknowledging it ($name, $publication)',
  ({ database, publication }) => {
    it('publishes every event exactly once after a restart and the lease', async () => {
      const key = await sellerKey()
      const env = { ...database.env(), DELIVERY_LEASE_SECONDS: '1' }
      let receiver = await spawnReceiver(
        { ...env, CRASH_AFTER_RECORDS: '7', CRASH_PUBLICATION: publication },
        0,
        CRASH_CHILD,
      )
      const created = await api(receiver.url, '/api/registrations', { auth: 'rfc9421', jwks: key.jwks })
      expect(created.status).toBe(201)
      const id: string = created.body.id
      const { port } = receiver
      const seller_ = seller(key)
      try {
        const keys = await seller_.burst(`${receiver.url}/webhooks/${id}`, 24, 'buyer_window')
        seller_.sender.start()
        expect(await receiver.exited).toBe('SIGKILL')
        const crashed = /crashing after record 7: (\S+)/.exec(receiver.output())
        expect(crashed, receiver.output()).not.toBeNull()

        receiver = await spawnReceiver(env, port)
        await until('the outbox to empty', seller_.drained)
        await expectEachOnce(receiver, id, keys)
        if (publication === 'claims') {
          // The event caught in the window was taken over and recognised, not stored again.
          expect(receiver.output()).toContain('"recovered":"unacknowledged_publication"')
          expect(receiver.output()).toContain(crashed![1]!)
        } else {
          // The killed transaction took its row with it: nothing to recover.
          expect(receiver.output()).not.toContain('"recovered"')
        }
        expect(receiver.output()).not.toContain('published_twice')
        // Every event ended delivered (attempts refused while the lease ran are recorded as failed attempts).
        const activity = await seller_.sender.activity('buyer_window', 10_000)
        const successes = activity.filter((row) => row.status === 'success')
        expect(successes.map((row) => row.idempotency_key).sort()).toEqual([...keys].sort())
      } finally {
        await seller_.close()
        await receiver.stop()
      }
    })
  },
)

describe('a receiver service killed at random moments of a burst (SQLite)', () => {
  it('loses nothing and publishes nothing twice across three kills', async () => {
    const key = await sellerKey()
    const env = { ...sqlite.env(), DELIVERY_LEASE_SECONDS: '1' }
    let receiver = await spawnReceiver(env)
    const created = await api(receiver.url, '/api/registrations', { auth: 'rfc9421', jwks: key.jwks })
    const id: string = created.body.id
    const { port } = receiver
    const seller_ = seller(key)
    const outputs: string[] = []
    try {
      const keys = await seller_.burst(`${receiver.url}/webhooks/${id}`, 150, 'buyer_random')
      seller_.sender.start()
      const delays: number[] = []
      for (let kill = 0; kill < 3; kill += 1) {
        const delay = 30 + Math.floor(Math.random() * 250)
        delays.push(delay)
        await sleep(delay)
        await receiver.kill()
        outputs.push(receiver.output())
        await sleep(50)
        receiver = await spawnReceiver(env, port)
      }
      await until('the outbox to empty', seller_.drained, 60_000)
      outputs.push(receiver.output())
      // The kill moments are printed so that a failure can be replayed.
      console.info(`random kills after ${delays.join(', ')} ms`)
      await expectEachOnce(receiver, id, keys)
      expect(outputs.join('\n')).not.toContain('published_twice')
      const activity = await seller_.sender.activity('buyer_random', 10_000)
      const successes = activity.filter((row) => row.status === 'success').map((row) => row.idempotency_key)
      expect(successes.sort()).toEqual([...keys].sort())
    } finally {
      await seller_.close()
      await receiver.stop()
    }
  })
})
