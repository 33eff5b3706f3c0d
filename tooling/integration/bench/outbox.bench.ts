/**
 * The seller side at scale: the webhook sender of @adwire/webhooks draining the PostgreSQL outbox of
 * @adwire/store-postgres with one worker process and with two (both cores), each leasing due entries with
 * `FOR UPDATE SKIP LOCKED`. The outbox is filled first (COUNT notifications, one destination per 100), the
 * workers are started together, and the row measures how long they take to deliver everything to a sink on
 * 127.0.0.1 that answers 200 at once (signing each attempt with Ed25519, recording each attempt in the
 * outbox and `webhook_activity`). The sink checks that every notification arrived exactly once. Each row
 * also reports the CPU time per delivery of the workers and of their PostgreSQL backends (/proc; run on a
 * database of its own, as other clients' new connections would be counted too). Then the
 * table and index sizes per delivered notification (the `storage` lines docs/capacity.md builds on).
 *
 *   pnpm --filter @adwire/integration bench   (after `pnpm build`; needs ADWIRE_TEST_POSTGRES_URL)
 *   ADWIRE_BENCH_COUNT=600                    fewer notifications per row
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { generateSigningKey } from '@adwire/http-signatures'
import { openPostgresStores } from '@adwire/store-postgres'
import { createWebhookSender } from '@adwire/webhooks'
import pg from 'pg'
import { dropSchema, freshSchema } from '../src/receiver-support.js'
import { clientBackends, cpuBetween, cpuOf } from './cpu.js'
import { printStorage, storageOf } from './storage.js'

const COUNT = Number(process.env.ADWIRE_BENCH_COUNT ?? 2000) * 2
const CONCURRENCY = 16
const WORKER_ENTRY = fileURLToPath(new URL('outbox-worker-entry.ts', import.meta.url))
const TSX = createRequire(import.meta.url).resolve('tsx')

const postgresUrl = process.env.ADWIRE_TEST_POSTGRES_URL
if (!postgresUrl) {
  console.log('\nSender outbox bench skipped: set ADWIRE_TEST_POSTGRES_URL')
  process.exit(0)
}

const { privateJwk } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-outbox' })

// The sink: every POST answered 200 at once; counts each idempotency key.
const received = new Map<string, number>()
const sink = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const key = (JSON.parse(Buffer.concat(chunks).toString()) as { idempotency_key: string }).idempotency_key
    received.set(key, (received.get(key) ?? 0) + 1)
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"accepted"}')
  })
})
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/webhooks`

interface Worker {
  readonly child: ChildProcessWithoutNullStreams
  readonly exited: Promise<unknown>
}

async function startWorker(schema: string): Promise<Worker> {
  const child = spawn(process.execPath, ['--import', TSX, WORKER_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: postgresUrl!,
      OUTBOX_SCHEMA: schema,
      SENDER_KEY: JSON.stringify(privateJwk),
      CONCURRENCY: String(CONCURRENCY),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise((resolve) => child.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('ready')) resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(() => reject(new Error(`the outbox worker exited before it was ready:\n${output}`)))
  })
  return { child, exited }
}

interface Row {
  readonly workers: number
  readonly rate: number
  /** CPU milliseconds per delivery of the worker processes and of their PostgreSQL backends. */
  readonly workerCpu: number
  readonly databaseCpu: number
  readonly storage?: Awaited<ReturnType<typeof storageOf>>
}

async function measure(workers: number): Promise<Row> {
  const schema = freshSchema('adwire_bench_outbox')
  const stores = await openPostgresStores({ connectionString: postgresUrl!, schema })
  received.clear()
  const running: Worker[] = []
  try {
    // Fill the outbox: COUNT notifications, a destination per 100 (a seller's buyers).
    const sender = createWebhookSender({ outbox: stores.outbox, key: privateJwk })
    const keys: string[] = []
    for (let index = 0; index < COUNT; index += 1)
      keys.push(
        await sender.notify(
          {
            channel: 'adcp',
            config: { url: sinkUrl, operation_id: `op_${index % 100}` },
            destination: `buyer_${index % 100}`,
          },
          {
            task_id: `task_${index}`,
            task_type: 'create_media_buy',
            status: index % 2 ? 'working' : 'completed',
            ...(index % 2 ? {} : { result: { media_buy_id: `mb_${index}`, packages: [] } }),
          },
        ),
      )
    const client = new pg.Client({ connectionString: postgresUrl })
    await client.connect()
    const existing = new Set(await clientBackends(client))
    for (let index = 0; index < workers; index += 1) running.push(await startWorker(schema))
    const pids = running.flatMap((worker) => worker.child.pid ?? [])
    const workersBefore = cpuOf(pids)
    const databaseBefore = cpuOf(await clientBackends(client, existing))
    const began = performance.now()
    for (const worker of running) worker.child.stdin.write('go\n')
    let workerCpu = 0
    let databaseCpu = 0
    try {
      for (;;) {
        const { rows } = await client.query<{ pending: string }>(
          `SELECT count(*) AS pending FROM "${schema}".outbox WHERE state = 'pending'`,
        )
        if (Number(rows[0]!.pending) === 0) break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      workerCpu = (cpuBetween(workersBefore, cpuOf(pids)) * 1000) / COUNT
      databaseCpu = (cpuBetween(databaseBefore, cpuOf(await clientBackends(client, existing))) * 1000) / COUNT
    } finally {
      await client.end()
    }
    const seconds = (performance.now() - began) / 1000
    if (received.size !== COUNT || keys.some((key) => received.get(key) !== 1))
      throw new Error(`expected each of ${COUNT} notifications once at the sink, found ${received.size} keys`)
    for (const worker of running) worker.child.kill('SIGTERM')
    await Promise.all(running.map((worker) => worker.exited))
    running.length = 0
    const storage = workers === 1 ? await storageOf(postgresUrl!, schema, COUNT) : undefined
    return { workers, rate: COUNT / seconds, workerCpu, databaseCpu, ...(storage ? { storage } : {}) }
  } finally {
    for (const worker of running) worker.child.kill('SIGKILL')
    await stores.close()
    await dropSchema(postgresUrl!, schema)
  }
}

console.log(
  [
    '',
    'Sender outbox (@adwire/webhooks sender on the @adwire/store-postgres outbox, FOR UPDATE SKIP LOCKED):',
    `${COUNT} notifications enqueued, then drained by 1 or 2 worker processes (${CONCURRENCY} attempts in flight each)`,
    'into a sink on 127.0.0.1 answering 200; each notification arrives exactly once.',
    `node ${process.version}; ${availableParallelism()} CPUs shared by the workers, the database and the sink.`,
    '',
  ].join('\n'),
)
const one = await measure(1)
const two = await measure(2)
sink.close()
for (const row of [one, two])
  console.log(
    `outbox: ${row.workers} worker process${row.workers > 1 ? 'es' : ' '}  ${row.rate.toFixed(0)} deliveries/s  ` +
      `worker CPU ${row.workerCpu.toFixed(2)} ms/delivery  pg CPU ${row.databaseCpu.toFixed(2)} ms/delivery`,
  )
console.log(`outbox: two workers ÷ one = ${(two.rate / one.rate).toFixed(2)}x`)
if (one.storage) printStorage('sender outbox, after delivery', one.storage)
