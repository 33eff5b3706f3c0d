/**
 * The reference receiver service's sustained signed deliveries per second over HTTP on 127.0.0.1: the built
 * service (`node apps/receiver/dist/server.js`, its own process, durable) on SQLite and on PostgreSQL, fed
 * unique pre-signed RFC 9421 deliveries by a small load generator in this process (a fixed count, a fixed
 * number of requests in flight, raw keep-alive sockets of bench/load.ts, each request serialised before the clock starts). Each delivery is verified, deduplicated,
 * published and acknowledged (200 `accepted`; the events API is checked afterwards: one event per delivery,
 * publications 1). Reported as a ratio to single-thread bare node:crypto Ed25519 verification of one
 * signature base measured just before the row (benches report ratios; tests never assert timings). Rows: 1 in
 * flight (its p50 is the trickle latency), 16 and 64 in flight, ES256 deliveries at 16, and two service
 * processes on the one database (both cores) against one. On PostgreSQL the commits per delivery are counted
 * from `pg_stat_database`. On Linux each row also reports the CPU time per delivery of the service processes and
 * of the PostgreSQL backends serving them (from /proc; run on a database of its own, as other clients' new
 * connections would be counted too), the inputs of docs/capacity.md.
 *
 *   pnpm --filter @adwire/integration bench      (after `pnpm build`; PostgreSQL rows need ADWIRE_TEST_POSTGRES_URL)
 *   ADWIRE_BENCH_COUNT=500                       fewer deliveries per row (a quick look)
 *   ADWIRE_BENCH_CPU_PROFILE=<dir>               each service process writes a V8 CPU profile there (bench/README.md)
 *   ADWIRE_BENCH_STORES=postgres                 only the PostgreSQL rows (or `sqlite`: only SQLite's)
 *   SQLITE_INBOX_THREAD=true                     the SQLite service with its inbox on a worker thread (default: the event loop)
 *   POSTGRES_INBOX_GROUPS=1                      the PostgreSQL service with one inbox group in flight (default: 2)
 *   ADWIRE_BENCH_ROWS=1x16,2x64                  only these rows (processes x in flight; also `es256`, `claims`,
 *                                                `ceiling`: the no-store ceiling rows, which run by default)
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { existsSync, mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSignatureBase, generateSigningKey, type SignedMessage } from '@adwire/http-signatures'
import pg from 'pg'
import {
  RECEIVER_ENTRY,
  api,
  dropSchema,
  events,
  freshSchema,
  spawnReceiver,
  type ReceiverProcess,
} from '../src/receiver-support.js'
import { clientBackends, cpuBetween, cpuOf, threadCpu, writtenBytes } from './cpu.js'
import { loadAccepted, presign as presignWith } from './deliveries.js'
import type { LoadResult } from './load.js'

// At most 10,000: the events API, which checks each row, lists that many.
const COUNT = Math.min(10_000, Number(process.env.ADWIRE_BENCH_COUNT ?? 2000))
const WARMUP = 300
const BARE_COUNT = 5000

/** CPU ms a delivery by thread name, from snapshots of each process's threads before and after a row. */
function threadsBetween(
  before: ReadonlyArray<Map<string, number>>,
  after: ReadonlyArray<Map<string, number>>,
  deliveries: number,
): Map<string, number> {
  const out = new Map<string, number>()
  after.forEach((threads, index) => {
    for (const [thread, seconds] of threads) {
      const used = seconds - (before[index]?.get(thread) ?? 0)
      out.set(thread, (out.get(thread) ?? 0) + (used * 1000) / deliveries)
    }
  })
  return out
}

/** One row: how many in flight, which key, how many service processes share the database. */
interface Plan {
  readonly inFlight: number
  readonly alg: 'ed25519' | 'es256'
  readonly processes: 1 | 2
  /** `claims`: the service publishing with claim → publish → complete, for comparison. Default inbox. */
  readonly publication?: 'claims'
}
const PLAN: readonly Plan[] = [
  { inFlight: 1, alg: 'ed25519', processes: 1 },
  { inFlight: 16, alg: 'ed25519', processes: 1 },
  { inFlight: 64, alg: 'ed25519', processes: 1 },
  { inFlight: 16, alg: 'es256', processes: 1 },
  { inFlight: 16, alg: 'ed25519', processes: 2 },
  { inFlight: 64, alg: 'ed25519', processes: 2 },
  { inFlight: 1, alg: 'ed25519', processes: 1, publication: 'claims' },
  { inFlight: 16, alg: 'ed25519', processes: 1, publication: 'claims' },
]
/**
 * ADWIRE_BENCH_ROWS=1x16,2x64: only those rows (`<processes>x<in flight>` of Ed25519 inbox rows; `es256` and
 * `claims` name the others), for a profile of one load.
 */
const ONLY = process.env.ADWIRE_BENCH_ROWS?.split(',').map((name) => name.trim())
const rowName = (plan: Plan) =>
  plan.publication ?? (plan.alg === 'es256' ? 'es256' : `${plan.processes}x${plan.inFlight}`)
const CHOSEN = ONLY ? PLAN.filter((plan) => ONLY.includes(rowName(plan))) : PLAN
const CLAIMS_ENTRY = fileURLToPath(new URL('receiver-claims-entry.ts', import.meta.url))
const CEILING_ENTRY = fileURLToPath(new URL('ceiling-entry.ts', import.meta.url))
const DURABLE_CEILING_ENTRY = fileURLToPath(new URL('durable-ceiling-entry.ts', import.meta.url))
/** The ceiling rows (bench/ceiling-entry.ts) run unless ADWIRE_BENCH_ROWS leaves out `ceiling`. */
const CEILING = !ONLY || ONLY.includes('ceiling')

if (!existsSync(RECEIVER_ENTRY)) {
  console.error(`${RECEIVER_ENTRY} is missing: run \`pnpm build\` (or the root \`pnpm bench\`) first`)
  process.exit(1)
}

const { privateJwk, publicJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-service' })
const es256 = await generateSigningKey({ alg: 'es256', kid: 'bench-service-es256' })
const KEYS = { ed25519: privateJwk, es256: es256.privateJwk }
const BOTH_KEYS = { keys: [...jwks.keys, ...es256.jwks.keys] }

/** `count` unique deliveries to `url`, each signed once with the row's key. */
const presign = (url: string, count: number, alg: Plan['alg'] = 'ed25519') =>
  presignWith(url, count, KEYS[alg])

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

const load = loadAccepted

interface Row {
  readonly name: string
  readonly plan: Plan
  readonly result: LoadResult
  readonly bare: number
  /** PostgreSQL commits per delivery (all processes), when counted. */
  readonly commits?: number
  /** CPU milliseconds per delivery: the service processes, and the PostgreSQL backends (when counted). */
  readonly serviceCpu?: number
  /** Of the service's main threads (their event loops), ms a delivery. */
  readonly mainCpu?: number
  /** Bytes the service processes wrote a delivery through write system calls (files and sockets; Linux). */
  readonly written?: number
  /** The service's CPU ms a delivery by thread name (Linux), summed over its processes. */
  readonly threads?: ReadonlyMap<string, number>
  readonly databaseCpu?: number
  /** PostgreSQL: samples of pg_stat_activity during the load, those with a backend waiting on a lock, deadlocks. */
  readonly locks?: LockSamples
}

interface LockSamples {
  readonly samples: number
  readonly waiting: number
  readonly deadlocks: number
  /** The statements seen waiting, first words, with how many samples. */
  readonly statements: ReadonlyMap<string, number>
}

/** Starts sampling lock waits; the returned function stops and reports. None off PostgreSQL. */
type LockSampler = () => Promise<() => Promise<LockSamples>>

/** The services' PostgreSQL backends ({@link clientBackends}) but those in `existing`; none off PostgreSQL. */
type BackendFinder = (existing?: ReadonlySet<number>) => Promise<readonly number[]>

/** Transactions committed in the database so far (PostgreSQL's own counter), or undefined elsewhere. */
type CommitCounter = () => Promise<number | undefined>

/** Starts `processes` services on `env`. */
async function start(
  env: Record<string, string>,
  processes: number,
  publication?: 'claims',
  entry = publication ? CLAIMS_ENTRY : undefined,
) {
  // ADWIRE_BENCH_CPU_PROFILE=<dir>: each service writes a V8 CPU profile there when it stops (bench/README.md).
  const profile = process.env.ADWIRE_BENCH_CPU_PROFILE
  // ADWIRE_BENCH_NODE_FLAGS: more flags for node (`--perf-basic-prof` for a `perf record` of the services).
  const options = [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    ...(process.env.ADWIRE_BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ]
  const receivers: ReceiverProcess[] = []
  for (let index = 0; index < processes; index += 1)
    receivers.push(await spawnReceiver(env, 0, entry, options))
  return receivers
}

/**
 * A new registration of the keys (on the first service; all share the database), and its delivery URL on
 * each service. Each row has its own, so that its events can be counted (the events API lists 10,000 at most).
 */
async function register(receivers: readonly ReceiverProcess[]) {
  const created = await api(receivers[0]!.url, '/api/registrations', { auth: 'rfc9421', jwks: BOTH_KEYS })
  if (created.status !== 201) throw new Error(`registration failed: ${created.status}`)
  const id: string = created.body.id
  return { id, urls: receivers.map((receiver) => `${receiver.url}/webhooks/${id}`) }
}

/** Throws unless registration `id` holds exactly `count` events, each published once. */
async function expectPublished(receivers: readonly ReceiverProcess[], id: string, count: number) {
  const published = await events(receivers[0]!.url, id)
  if (published.length !== count || published.some((event) => event.publications !== 1))
    throw new Error(`expected ${count} events published once each, found ${published.length}`)
}

/** Measures every row of the plan on `env`, a fresh set of service processes per process count. */
async function measure(
  name: string,
  env: Record<string, string>,
  commits: CommitCounter,
  backends: BackendFinder = async () => [],
  sampleLocks?: LockSampler,
): Promise<Row[]> {
  const rows: Row[] = []
  const setups = [
    { processes: 1, publication: undefined },
    { processes: 2, publication: undefined },
    { processes: 1, publication: 'claims' },
  ] as const
  for (const { processes, publication } of setups) {
    if (!CHOSEN.some((row) => row.processes === processes && row.publication === publication)) continue
    const existing = new Set(await backends())
    const receivers = await start(env, processes, publication)
    try {
      // Connections, JIT, caches, on every process.
      const warm = await register(receivers)
      for (const url of warm.urls) await load(await presign(url, WARMUP), 8)
      await expectPublished(receivers, warm.id, WARMUP * warm.urls.length)
      for (const plan of CHOSEN.filter(
        (row) => row.processes === processes && row.publication === publication,
      )) {
        const { id, urls } = await register(receivers)
        // The deliveries are spread over the processes: each is signed for the URL it is sent to.
        const messages: SignedMessage[] = []
        const share = Math.ceil(COUNT / urls.length)
        for (const url of urls) messages.push(...(await presign(url, share, plan.alg)))
        messages.sort(() => Math.random() - 0.5)
        const bare = bareRate()
        const before = await commits()
        const pids = () => receivers.flatMap((receiver) => receiver.child.pid ?? [])
        const serviceBefore = cpuOf(pids())
        const mainBefore = cpuOf(pids(), 'main')
        const threadsBefore = pids().map(threadCpu)
        const writtenBefore = pids().map(writtenBytes)
        const databaseBefore = cpuOf(await backends(existing))
        const stopSampling = await sampleLocks?.()
        const result = await load(messages, plan.inFlight)
        const locks = await stopSampling?.()
        const serviceAfter = cpuOf(pids())
        const mainAfter = cpuOf(pids(), 'main')
        const threads = threadsBetween(threadsBefore, pids().map(threadCpu), messages.length)
        const writtenAfter = pids().map(writtenBytes)
        let written: number | undefined = 0
        for (const [index, bytes] of writtenAfter.entries()) {
          const earlier = writtenBefore[index]
          written =
            bytes === undefined || earlier === undefined || written === undefined
              ? undefined
              : written + bytes - earlier
        }
        if (written !== undefined) written /= messages.length
        const databaseAfter = cpuOf(await backends(existing))
        const after = await commits()
        const counted =
          before === undefined || after === undefined ? {} : { commits: (after - before) / messages.length }
        const perDelivery = (seconds: number) => (seconds * 1000) / messages.length
        const cpu = {
          ...(serviceAfter.size > 0
            ? {
                serviceCpu: perDelivery(cpuBetween(serviceBefore, serviceAfter)),
                mainCpu: perDelivery(cpuBetween(mainBefore, mainAfter)),
              }
            : {}),
          ...(databaseAfter.size > 0
            ? { databaseCpu: perDelivery(cpuBetween(databaseBefore, databaseAfter)) }
            : {}),
        }
        rows.push({
          name,
          plan,
          result,
          bare,
          ...counted,
          ...cpu,
          threads,
          ...(written !== undefined ? { written } : {}),
          ...(locks ? { locks } : {}),
        })
        await expectPublished(receivers, id, messages.length)
      }
    } finally {
      for (const receiver of receivers) await receiver.stop()
    }
  }
  return rows
}

console.log(
  [
    '',
    'Receiver service (node apps/receiver/dist/server.js, its own process) over HTTP on 127.0.0.1:',
    `${COUNT} unique signed deliveries per row after ${WARMUP} to warm up, each answered 200 accepted.`,
    'ratio = deliveries/s ÷ single-thread bare node:crypto Ed25519 verifications/s, measured just before the row.',
    'procs 2: two service processes on the one database, deliveries spread over both (both cores).',
    '"claims" rows: the service publishing with claim → publish → complete (one commit per step), for comparison.',
    `node ${process.version}; ${availableParallelism()} CPUs shared by the service, the database and the load generator.`,
    '',
  ].join('\n'),
)
// ADWIRE_BENCH_STORES=postgres (or sqlite): only that store's rows.
const only = process.env.ADWIRE_BENCH_STORES
const rows: Row[] =
  only === 'postgres'
    ? []
    : await measure(
        'SQLite (WAL, synchronous=FULL)',
        {
          DATABASE_URL: `sqlite:${path.join(mkdtempSync(path.join(tmpdir(), 'adwire-bench-service-')), 'r.sqlite')}`,
          // SQLITE_INBOX_THREAD=true: the inbox on a worker thread of the service, for comparison.
          ...(process.env.SQLITE_INBOX_THREAD
            ? { SQLITE_INBOX_THREAD: process.env.SQLITE_INBOX_THREAD }
            : {}),
        },
        async () => undefined,
      )
const postgresUrl = only === 'sqlite' ? undefined : process.env.ADWIRE_TEST_POSTGRES_URL
if (postgresUrl) {
  const schema = freshSchema('adwire_bench_service')
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  // The statistics collector reports with a delay: clear the snapshot and wait for the counter to settle.
  const commits = async () => {
    await new Promise((resolve) => setTimeout(resolve, 600))
    await client.query('SELECT pg_stat_clear_snapshot()')
    const { rows: found } = await client.query<{ commits: string }>(
      'SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()',
    )
    return Number(found[0]!.commits)
  }
  const backends = (existing?: ReadonlySet<number>) => clientBackends(client, existing)
  // Every 100 ms during the load: does any backend of this database wait on a lock (pg_stat_activity), and
  // how many deadlocks did pg_stat_database count over the row.
  const sampler = new pg.Client({ connectionString: postgresUrl })
  await sampler.connect()
  const deadlocks = async () => {
    await sampler.query('SELECT pg_stat_clear_snapshot()')
    const { rows: found } = await sampler.query<{ deadlocks: string }>(
      'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
    )
    return Number(found[0]!.deadlocks)
  }
  const sampleLocks: LockSampler = async () => {
    const deadlocksBefore = await deadlocks()
    let samples = 0
    let waiting = 0
    const statements = new Map<string, number>()
    let running = true
    const loop = (async () => {
      while (running) {
        const { rows: found } = await sampler.query<{ query: string }>(
          `SELECT query FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
        )
        samples += 1
        if (found.length > 0) waiting += 1
        for (const { query } of found) {
          const words = query.replace(/\s+/g, ' ').trim().slice(0, 60)
          statements.set(words, (statements.get(words) ?? 0) + 1)
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    return async () => {
      running = false
      await loop
      // The statistics collector reports with a delay.
      await new Promise((resolve) => setTimeout(resolve, 600))
      return { samples, waiting, deadlocks: (await deadlocks()) - deadlocksBefore, statements }
    }
  }
  try {
    rows.push(
      ...(await measure(
        'PostgreSQL',
        {
          DATABASE_URL: postgresUrl,
          DATABASE_SCHEMA: schema,
          // POSTGRES_INBOX_GROUPS=1: one inbox group in flight per process instead of two, for comparison.
          ...(process.env.POSTGRES_INBOX_GROUPS
            ? { POSTGRES_INBOX_GROUPS: process.env.POSTGRES_INBOX_GROUPS }
            : {}),
        },
        commits,
        backends,
        sampleLocks,
      )),
    )
  } finally {
    await sampler.end()
    await client.end()
    await dropSchema(postgresUrl, schema)
  }
}

/**
 * The ceiling of this machine and this load generator: a server that only reads each body and checks one
 * Ed25519 signature (bench/ceiling-entry.ts), on the event loop and on the thread pool, at 16 and 64 in flight.
 * No receiver that verifies can pass it here, whatever its store: the goals are read against these rows.
 * Beside them, the durable ceiling (bench/durable-ceiling-entry.ts): the thread-pool ceiling plus a nonce, a
 * claim and an event row a delivery on SQLite, group-committed and synced as the service does: the least a
 * durable receiver can cost here.
 */
async function measureCeiling(): Promise<Row[]> {
  const out: Row[] = []
  for (const kind of ['inline', 'pool', 'durable'] as const) {
    const durable = kind === 'durable'
    const env: Record<string, string> = durable
      ? {
          DURABLE_CEILING_DB: path.join(
            mkdtempSync(path.join(tmpdir(), 'adwire-bench-ceiling-')),
            'ceiling.sqlite',
          ),
        }
      : { CEILING_VERIFY: kind }
    const [server] = await start(env, 1, undefined, durable ? DURABLE_CEILING_ENTRY : CEILING_ENTRY)
    const pid = server!.child.pid!
    try {
      const url = `${server!.url}/webhooks/ceiling`
      await load(await presign(url, WARMUP), 8)
      for (const inFlight of [16, 64]) {
        // Unique deliveries for each row: the durable ceiling keeps every nonce.
        const messages = await presign(url, COUNT)
        const bare = bareRate()
        const before = cpuOf([pid])
        const mainBefore = cpuOf([pid], 'main')
        const threadsBefore = threadCpu(pid)
        const writtenBefore = writtenBytes(pid)
        const result = await load(messages, inFlight)
        const writtenAfter = writtenBytes(pid)
        const perDelivery = (seconds: number) => (seconds * 1000) / messages.length
        const name = durable
          ? 'durable ceiling: the pool ceiling + nonce, claim, event rows (SQLite)'
          : `ceiling: HTTP + 1 verify ${kind === 'pool' ? '(thread pool)' : '(inline)'}, no store`
        out.push({
          name,
          plan: { inFlight, alg: 'ed25519', processes: 1 },
          result,
          bare,
          serviceCpu: perDelivery(cpuBetween(before, cpuOf([pid]))),
          mainCpu: perDelivery(cpuBetween(mainBefore, cpuOf([pid], 'main'))),
          threads: threadsBetween([threadsBefore], [threadCpu(pid)], messages.length),
          ...(writtenBefore !== undefined && writtenAfter !== undefined
            ? { written: (writtenAfter - writtenBefore) / messages.length }
            : {}),
        })
      }
    } finally {
      await server!.stop()
    }
  }
  // Two thread-pool ceilings sharing the machine, 64 in flight spread over both: what two processes cost a
  // delivery against one when nothing is shared between them but the cores (the yardstick of the pair rows).
  const servers = await start({ CEILING_VERIFY: 'pool' }, 2, undefined, CEILING_ENTRY)
  try {
    const urls = servers.map((server) => `${server.url}/webhooks/ceiling`)
    for (const url of urls) await load(await presign(url, WARMUP), 8)
    const messages: SignedMessage[] = []
    for (const url of urls) messages.push(...(await presign(url, Math.ceil(COUNT / urls.length))))
    messages.sort(() => Math.random() - 0.5)
    const pids = servers.map((server) => server.child.pid!)
    const bare = bareRate()
    const before = cpuOf(pids)
    const mainBefore = cpuOf(pids, 'main')
    const threadsBefore = pids.map(threadCpu)
    const result = await load(messages, 64)
    const perDelivery = (seconds: number) => (seconds * 1000) / messages.length
    out.push({
      name: 'ceiling: HTTP + 1 verify (thread pool), no store',
      plan: { inFlight: 64, alg: 'ed25519', processes: 2 },
      result,
      bare,
      serviceCpu: perDelivery(cpuBetween(before, cpuOf(pids))),
      mainCpu: perDelivery(cpuBetween(mainBefore, cpuOf(pids, 'main'))),
      threads: threadsBetween(threadsBefore, pids.map(threadCpu), messages.length),
    })
  } finally {
    for (const server of servers) await server.stop()
  }
  return out
}
if (CEILING) rows.push(...(await measureCeiling()))

const table = [
  [
    'store',
    'key',
    'procs',
    'in flight',
    'deliveries/s',
    'p50 ms',
    'p99 ms',
    'bare verify/s',
    'ratio',
    'commits',
    'svc CPU ms',
    'main ms',
    'written KB',
    'pg CPU ms',
    'lock waits',
    'deadlocks',
  ],
  ...rows.map((row) => [
    row.plan.publication ? `${row.name}, claims` : row.name,
    row.plan.alg === 'ed25519' ? 'Ed25519' : 'ES256',
    String(row.plan.processes),
    String(row.plan.inFlight),
    row.result.rate.toFixed(0),
    row.result.p50.toFixed(1),
    row.result.p99.toFixed(1),
    row.bare.toFixed(0),
    (row.result.rate / row.bare).toFixed(3),
    row.commits === undefined ? '' : row.commits.toFixed(2),
    row.serviceCpu === undefined ? '' : row.serviceCpu.toFixed(2),
    row.mainCpu === undefined ? '' : row.mainCpu.toFixed(3),
    row.written === undefined ? '' : (row.written / 1024).toFixed(1),
    row.databaseCpu === undefined ? '' : row.databaseCpu.toFixed(2),
    row.locks ? `${row.locks.waiting}/${row.locks.samples}` : '',
    row.locks ? String(row.locks.deadlocks) : '',
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
for (const name of new Set(rows.map((row) => row.name))) {
  const rate = (processes: number, inFlight: number) =>
    rows.find(
      (row) =>
        row.name === name &&
        row.plan.alg === 'ed25519' &&
        !row.plan.publication &&
        row.plan.processes === processes &&
        row.plan.inFlight === inFlight,
    )?.result.rate
  const one = rate(1, 64)
  const two = rate(2, 64)
  if (one && two) console.log(`${name}: two processes ÷ one at 64 in flight = ${(two / one).toFixed(2)}x`)
  // CPU a delivery of the pair against one process's: the service's and (PostgreSQL) the database's.
  const cpu = (processes: number) => {
    const row = rows.find(
      (candidate) =>
        candidate.name === name &&
        candidate.plan.alg === 'ed25519' &&
        !candidate.plan.publication &&
        candidate.plan.processes === processes &&
        candidate.plan.inFlight === 64,
    )
    return row?.serviceCpu === undefined ? undefined : row.serviceCpu + (row.databaseCpu ?? 0)
  }
  const cpuOne = cpu(1)
  const cpuTwo = cpu(2)
  if (cpuOne && cpuTwo)
    console.log(
      `${name}: CPU a delivery, two processes ÷ one at 64 in flight = ${(cpuTwo / cpuOne).toFixed(2)}x (${cpuOne.toFixed(2)} → ${cpuTwo.toFixed(2)} ms)`,
    )
}
console.log(
  '\nCPU ms a delivery by thread of the service (main: its event loop; WorkerThread: the SQLite inbox;',
)
console.log('libuv-worker: the thread pool, verification and WAL syncs; V8Worker: the garbage collector):')
for (const row of rows) {
  if (!row.threads || row.threads.size === 0) continue
  const used = [...row.threads]
    .filter(([, ms]) => ms >= 0.0005)
    .map(([thread, ms]) => `${thread === 'MainThread' ? 'main' : thread} ${ms.toFixed(3)}`)
    .join(', ')
  console.log(
    `  ${row.name} ${row.plan.processes}x${row.plan.inFlight}${row.plan.alg === 'es256' ? ' ES256' : ''}: ${used}`,
  )
}
for (const row of rows) {
  if (!row.locks || row.locks.statements.size === 0) continue
  const seen = [...row.locks.statements].map(([statement, count]) => `${count}× ${statement}`).join('; ')
  console.log(`${row.name} ${row.plan.processes}x${row.plan.inFlight}: waiting on a lock: ${seen}`)
}
console.log(
  postgresUrl
    ? 'lock waits: samples of pg_stat_activity every 100 ms during the load with a backend of the database waiting on a lock / samples'
    : '\n(PostgreSQL rows skipped: set ADWIRE_TEST_POSTGRES_URL)',
)
