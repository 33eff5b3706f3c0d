/**
 * End-to-end receiver throughput: `handle()` (content checks, RFC 9421 verify, durable replay insert, durable
 * claim, convergence, publish record, acknowledgement) on SQLite and on PostgreSQL, each step its own commit
 * (`claims`) or all in the store's transactional inbox with group commit (`inbox`), as a ratio to bare
 * node:crypto verification of a signature base measured in the same run (architecture.md: benches report
 * ratios, tests never assert timings).
 *
 *   pnpm --filter @adwire/integration bench      (PostgreSQL rows need ADWIRE_TEST_POSTGRES_URL)
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { buildSignatureBase, generateSigningKey, signWebhook } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import {
  createWebhookReceiver,
  type ClaimStore,
  type ConvergenceStore,
  type DeliveryInbox,
} from '@adwire/webhooks'
import type { ReplayStore } from '@adwire/http-signatures'
import pg from 'pg'

const COUNT = 1500
const { privateJwk, publicJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-receiver' })
const url = 'https://buyer.example.com/webhooks/seller'
const now = Math.floor(Date.now() / 1000)

async function deliveries(count: number) {
  const out = []
  for (let index = 0; index < count; index += 1) {
    const body = JSON.stringify({
      idempotency_key: `whk_${crypto.randomUUID()}`,
      operation_id: 'op_bench',
      task_id: `task_${crypto.randomUUID()}`,
      task_type: 'create_media_buy',
      status: 'working',
      timestamp: '2026-04-18T10:00:00Z',
      result: { percentage: index % 100, current_step: 'matching_inventory' },
    })
    out.push(
      await signWebhook(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { key: privateJwk, now },
      ),
    )
  }
  return out
}

// The primitive: bare Ed25519 verification of one signature base, in this run.
const sample = (await deliveries(1))[0]!
const base = Buffer.from(buildSignatureBase(sample))
const signature = Buffer.from(sample.headers['signature']!.slice(6, -1), 'base64url')
const { kid: _k, alg: _a, use: _u, key_ops: _o, adcp_use: _p, ...bareJwk } = publicJwk
const keyObject = createPublicKey({ key: bareJwk as Record<string, string>, format: 'jwk' })
function bareRate(): number {
  const began = performance.now()
  for (let index = 0; index < COUNT; index += 1) nodeVerify(null, base, keyObject, signature)
  return COUNT / ((performance.now() - began) / 1000)
}

interface Stores {
  claims: ClaimStore
  convergence: ConvergenceStore
  replay: ReplayStore
  /** The store's transactional inbox, its writer storing nothing (the publish callback's equivalent here). */
  inbox(): DeliveryInbox
  close(): void | Promise<void>
}

async function receiverRate(stores: Stores, concurrency: number, inbox: boolean): Promise<number> {
  const receiver = createWebhookReceiver({
    registration: () => ({
      id: 'seller',
      auth: { mode: 'rfc9421', keys: jwks },
      sender: 'https://seller.example.com',
    }),
    claims: stores.claims,
    convergence: stores.convergence,
    replayStore: stores.replay,
    ...(inbox ? { inbox: stores.inbox() } : { publish: async () => {} }),
  })
  const messages = await deliveries(COUNT)
  let next = 0
  let failures = 0
  const began = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < messages.length) {
        const message = messages[next++]!
        const request = new Request(url, {
          method: 'POST',
          headers: message.headers as Record<string, string>,
          body: message.body as string,
        })
        if ((await receiver.handle(request)).status !== 200) failures += 1
      }
    }),
  )
  const seconds = (performance.now() - began) / 1000
  if (failures > 0) throw new Error(`${failures} deliveries were not accepted`)
  return COUNT / seconds
}

console.log(
  `receiver handle() per second vs bare node:crypto Ed25519 verify per second, ${COUNT} unique signed deliveries each\n`,
)
const rows: Array<[string, () => Promise<Stores>]> = [
  [
    'SQLite (WAL, synchronous=FULL)',
    async () => {
      const stores = openSqliteStores({
        path: path.join(mkdtempSync(path.join(tmpdir(), 'adwire-bench-')), 'bench.sqlite'),
      })
      return { ...stores, inbox: () => stores.createInbox({ write: () => {} }) }
    },
  ],
]
const postgresUrl = process.env.ADWIRE_TEST_POSTGRES_URL
const schema = `adwire_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`
if (postgresUrl)
  rows.push([
    'PostgreSQL',
    async () => {
      const stores = await openPostgresStores({ connectionString: postgresUrl, schema, maxConnections: 16 })
      return { ...stores, inbox: () => stores.createInbox({ write: async () => {} }) }
    },
  ])
else console.log('(PostgreSQL rows skipped: set ADWIRE_TEST_POSTGRES_URL)')

for (const [name, open] of rows) {
  for (const [concurrency, inbox] of [
    [1, false],
    [16, false],
    [1, true],
    [16, true],
  ] as const) {
    const stores = await open()
    try {
      const bare = bareRate()
      const rate = await receiverRate(stores, concurrency, inbox)
      const label = `${name}, ${inbox ? 'inbox' : 'claims'}, ${concurrency} in flight`
      console.log(
        `${label.padEnd(52)} ratio ${(rate / bare).toFixed(2)}   (≈ ${rate.toFixed(0)} deliveries/s; bare verify ≈ ${bare.toFixed(0)}/s)`,
      )
    } finally {
      await stores.close()
    }
  }
}
if (postgresUrl) {
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  await client.query(`drop schema if exists ${schema} cascade`)
  await client.end()
}
