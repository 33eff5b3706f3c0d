/**
 * The reference receiver service's sustained signed deliveries per second over HTTP on 127.0.0.1: the built
 * service (`node apps/receiver/dist/server.js`, its own process) on SQLite and on PostgreSQL, fed unique
 * pre-signed RFC 9421 deliveries by a small load generator in this process (a fixed count, a fixed number of
 * requests in flight, global fetch with keep-alive). Each delivery is verified, deduplicated, published and
 * acknowledged (200 `accepted`; the events API is checked afterwards: one event per delivery, publications 1).
 * Reported as a ratio to bare node:crypto Ed25519 verification of one signature base measured in the same run
 * (benches report ratios; tests never assert timings).
 *
 *   pnpm --filter @adwire/integration bench      (after `pnpm build`; PostgreSQL rows need ADWIRE_TEST_POSTGRES_URL)
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { existsSync, mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import {
  buildSignatureBase,
  generateSigningKey,
  signWebhook,
  type SignedMessage,
} from '@adwire/http-signatures'
import {
  RECEIVER_ENTRY,
  api,
  dropSchema,
  events,
  freshSchema,
  spawnReceiver,
} from '../src/receiver-support.js'

const COUNT = 2000
const WARMUP = 300
const IN_FLIGHT = [1, 32]
const BARE_COUNT = 5000

if (!existsSync(RECEIVER_ENTRY)) {
  console.error(`${RECEIVER_ENTRY} is missing: run \`pnpm build\` (or the root \`pnpm bench\`) first`)
  process.exit(1)
}

const { privateJwk, publicJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-service' })

/** `count` unique deliveries to `url`, each signed once (its own nonce), ready to send. */
async function presign(url: string, count: number): Promise<SignedMessage[]> {
  const out: SignedMessage[] = []
  const timestamp = new Date().toISOString()
  for (let index = 0; index < count; index += 1) {
    const body = JSON.stringify({
      idempotency_key: `whk_${crypto.randomUUID()}`,
      operation_id: `op_bench_${index % 50}`,
      task_id: `task_${crypto.randomUUID()}`,
      task_type: 'create_media_buy',
      status: 'working',
      timestamp,
      result: { percentage: index % 100, current_step: 'matching_inventory' },
    })
    out.push(
      await signWebhook(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { key: privateJwk },
      ),
    )
  }
  return out
}

// The primitive: bare Ed25519 verification of one signature base with node:crypto, in this run.
const sample = (await presign('https://buyer.example.com/webhooks/bench', 1))[0]!
const base = Buffer.from(buildSignatureBase(sample))
const signature = Buffer.from(sample.headers['signature']!.slice(6, -1), 'base64url')
const { kid: _k, alg: _a, use: _u, key_ops: _o, adcp_use: _p, ...bareJwk } = publicJwk
const keyObject = createPublicKey({ key: bareJwk as Record<string, string>, format: 'jwk' })
function bareRate(): number {
  const began = performance.now()
  for (let index = 0; index < BARE_COUNT; index += 1)
    if (!nodeVerify(null, base, keyObject, signature)) throw new Error('bare verification failed')
  return BARE_COUNT / ((performance.now() - began) / 1000)
}

interface LoadResult {
  readonly rate: number
  readonly p50: number
  readonly p99: number
}

/** Sends every message once, `inFlight` at a time, and checks that each answer is 200 `accepted`. */
async function load(messages: readonly SignedMessage[], inFlight: number): Promise<LoadResult> {
  const latencies: number[] = new Array(messages.length)
  let next = 0
  let failure: string | undefined
  const began = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < messages.length) {
        const index = next++
        const message = messages[index]!
        const sent = performance.now()
        const response = await fetch(message.url, {
          method: 'POST',
          headers: message.headers as Record<string, string>,
          body: message.body as string,
        })
        const text = await response.text()
        latencies[index] = performance.now() - sent
        if (response.status !== 200 || !text.includes('"accepted"')) failure ??= `${response.status} ${text}`
      }
    }),
  )
  const seconds = (performance.now() - began) / 1000
  if (failure) throw new Error(`a delivery was not accepted: ${failure}`)
  latencies.sort((a, b) => a - b)
  const at = (share: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))]!
  return { rate: messages.length / seconds, p50: at(0.5), p99: at(0.99) }
}

interface Row {
  readonly name: string
  readonly inFlight: number
  readonly result: LoadResult
  readonly bare: number
}

/** Starts the service on `env`, registers the key, and measures one row per in-flight level. */
async function measure(name: string, env: Record<string, string>): Promise<Row[]> {
  // ADWIRE_BENCH_CPU_PROFILE=<dir>: the service writes a V8 CPU profile there when it stops (bench/README.md).
  const profile = process.env.ADWIRE_BENCH_CPU_PROFILE
  const receiver = await spawnReceiver(
    env,
    0,
    undefined,
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
  )
  const rows: Row[] = []
  try {
    const created = await api(receiver.url, '/api/registrations', { auth: 'rfc9421', jwks })
    if (created.status !== 201) throw new Error(`registration failed: ${created.status}`)
    const url: string = created.body.url
    await load(await presign(url, WARMUP), 8) // connections, JIT, caches
    let sent = WARMUP
    for (const inFlight of IN_FLIGHT) {
      const messages = await presign(url, COUNT)
      const bare = bareRate()
      rows.push({ name, inFlight, result: await load(messages, inFlight), bare })
      sent += COUNT
    }
    const published = await events(receiver.url, created.body.id)
    if (published.length !== sent || published.some((event) => event.publications !== 1))
      throw new Error(`expected ${sent} events published once each, found ${published.length}`)
  } finally {
    await receiver.stop()
  }
  return rows
}

console.log(
  [
    '',
    'Receiver service (node apps/receiver/dist/server.js, its own process) over HTTP on 127.0.0.1:',
    `${COUNT} unique signed deliveries per row after ${WARMUP} to warm up, each answered 200 accepted.`,
    'ratio = deliveries/s ÷ bare node:crypto Ed25519 verifications/s, measured just before the row.',
    `node ${process.version}; ${availableParallelism()} CPUs shared by the service, the database and the load generator.`,
    '',
  ].join('\n'),
)
const rows: Row[] = await measure('SQLite (WAL, synchronous=FULL)', {
  DATABASE_URL: `sqlite:${path.join(mkdtempSync(path.join(tmpdir(), 'adwire-bench-service-')), 'r.sqlite')}`,
})
const postgresUrl = process.env.ADWIRE_TEST_POSTGRES_URL
if (postgresUrl) {
  const schema = freshSchema('adwire_bench_service')
  try {
    rows.push(...(await measure('PostgreSQL', { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema })))
  } finally {
    await dropSchema(postgresUrl, schema)
  }
}

const table = [
  ['store', 'in flight', 'deliveries/s', 'p50 ms', 'p99 ms', 'bare verify/s', 'ratio'],
  ...rows.map((row) => [
    row.name,
    String(row.inFlight),
    row.result.rate.toFixed(0),
    row.result.p50.toFixed(1),
    row.result.p99.toFixed(1),
    row.bare.toFixed(0),
    (row.result.rate / row.bare).toFixed(3),
  ]),
]
const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)))
const format = (line: string[]) =>
  line
    .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
    .join('  ')
console.log(format(table[0]!))
console.log(widths.map((width) => '-'.repeat(width)).join('  '))
for (const line of table.slice(1)) console.log(format(line))
console.log(postgresUrl ? '' : '\n(PostgreSQL rows skipped: set ADWIRE_TEST_POSTGRES_URL)')
