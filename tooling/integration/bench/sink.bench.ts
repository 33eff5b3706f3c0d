/**
 * The reference receiver's relay into each sink (issue 27): RabbitMQ (`@adwire/sink-rabbitmq`), Redis Streams
 * (`@adwire/sink-redis`), NATS JetStream (`@adwire/sink-nats`) and, as a reference, the HTTP sink posting to a
 * node:http server in this process that answers 200. Two kinds of rows, in one run:
 *
 * - **Relay rows**: the built service (`node apps/receiver/dist/server.js`) accepts N signed deliveries while
 *   its SINK_URL points at a closed port (every publish refused), stops; the refused attempts' back-off is
 *   reset to what acceptance writes (due at receipt, no attempt, no lease), so that the drain measures
 *   publishing and not waiting out the back-off; the service starts again with the real SINK_URL and the clock
 *   runs from the spawn until `/health` shows `forwarding.pending` 0 (polled every 50 ms). The broker is then
 *   read back: it must hold N messages under N distinct message ids. Printed: events/s from the spawn (boot
 *   included), the events still pending once the service answered, the rate and the service's CPU ms per
 *   event from then on (bench/cpu.ts). On SQLite, and on PostgreSQL with ADWIRE_TEST_POSTGRES_URL.
 * - **Receiver rows**: the service on SQLite at 16 and 64 in flight (the lean load generator of bench/load.ts,
 *   unique pre-signed Ed25519 deliveries, each answered 200 accepted) without a sink, with SINK_URL at each
 *   sink, and without a sink again: deliveries/s, p50/p99, the ratio to the mean of the two no-sink rows of
 *   the run (the machine drifts between the first and the last), the service's CPU ms per
 *   delivery during the load and until its relay drained, whether the relay kept up (pending when the load
 *   ended) and how long it took to drain after. Each sink's destination is read back afterwards.
 *
 * A broker that does not answer (`resolveTestBroker` of @adwire/vitest-config: the environment's URL, else the
 * development default on 127.0.0.1) skips its rows with the reason printed; a relay that does not drain within
 * its deadline is reported as such, never waited for. Every queue, stream and subject is fresh and deleted after.
 *
 *   pnpm --filter @adwire/integration bench      (after `pnpm build`; PostgreSQL relay rows need ADWIRE_TEST_POSTGRES_URL)
 *   node --import tsx bench/sink.bench.ts        this bench alone (from tooling/integration)
 *   ADWIRE_BENCH_COUNT=500                       fewer events per row (a quick look; default 2000)
 *   ADWIRE_BENCH_SINKS=redis,http                only these sinks (rabbitmq, redis, nats, http)
 *   ADWIRE_BENCH_STORES=sqlite                   relay rows on one store only (or `postgres`)
 *   ADWIRE_BENCH_ROWS=relay                      only the relay rows (or `receiver`: only the receiver rows)
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { generateSigningKey } from '@adwire/http-signatures'
import { brokerTarget, type Published } from '@adwire/vitest-config/broker-targets'
import { BROKERS, resolveTestBroker } from '@adwire/vitest-config/brokers'
import pg from 'pg'
import {
  RECEIVER_ENTRY,
  api,
  dropSchema,
  freshSchema,
  spawnReceiver,
  type ReceiverProcess,
} from '../src/receiver-support.js'
import { cpuBetween, cpuOf } from './cpu.js'
import { loadAccepted, presign as presignWith } from './deliveries.js'
import type { LoadResult } from './load.js'

const COUNT = Number(process.env.ADWIRE_BENCH_COUNT ?? 2000)
const WARMUP = 300
const IN_FLIGHT = [16, 64] as const
/** How often `/health` is read while a relay drains, ms. */
const POLL_MS = 50
/** How long a relay may take to drain before its row is reported as not drained, ms. */
const DRAIN_DEADLINE_MS = 30_000 + COUNT * 20
/** How long reading a destination back may take, ms. */
const READ_DEADLINE_MS = 60_000 + COUNT * 10
/** How long deleting a destination may take, ms. */
const DROP_DEADLINE_MS = 10_000

type SinkKind = 'rabbitmq' | 'redis' | 'nats' | 'http'
const LABELS: Record<SinkKind, string> = {
  rabbitmq: 'RabbitMQ',
  redis: 'Redis Streams',
  nats: 'NATS JetStream',
  http: 'HTTP (local 200)',
}
const SINKS = (process.env.ADWIRE_BENCH_SINKS?.split(',').map((name) => name.trim()) ?? [
  'rabbitmq',
  'redis',
  'nats',
  'http',
]) as SinkKind[]
const ROWS = process.env.ADWIRE_BENCH_ROWS?.split(',').map((name) => name.trim()) ?? ['relay', 'receiver']
const STORES = process.env.ADWIRE_BENCH_STORES

if (!existsSync(RECEIVER_ENTRY)) {
  console.error(`${RECEIVER_ENTRY} is missing: run \`pnpm build\` (or the root \`pnpm bench\`) first`)
  process.exit(1)
}

const { privateJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-sink' })

/** `count` unique deliveries to `url`, each signed once with the bench key. */
const presign = (url: string, count: number) => presignWith(url, count, privateJwk)

const load = loadAccepted

/** A new registration of the bench key on `receiver`, and its delivery URL. */
async function register(receiver: ReceiverProcess): Promise<string> {
  const created = await api(receiver.url, '/api/registrations', { auth: 'rfc9421', jwks })
  if (created.status !== 201) throw new Error(`registration failed: ${created.status}`)
  return `${receiver.url}/webhooks/${created.body.id as string}`
}

/** `forwarding` of the service's `/health`. */
interface Forwarding {
  readonly sink: string
  readonly pending: number
  readonly published: number
  readonly last_error_at: string | null
}
async function forwarding(receiver: ReceiverProcess): Promise<Forwarding> {
  const answer = await api(receiver.url, '/health')
  if (answer.status !== 200 || !answer.body?.forwarding)
    throw new Error(`/health answered ${answer.status} without forwarding: ${JSON.stringify(answer.body)}`)
  return answer.body.forwarding as Forwarding
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `/health` every {@link POLL_MS} until nothing is pending or the deadline passes. */
async function untilDrained(receiver: ReceiverProcess): Promise<{ drained: boolean; last: Forwarding }> {
  const deadline = performance.now() + DRAIN_DEADLINE_MS
  for (;;) {
    const last = await forwarding(receiver)
    if (last.pending === 0) return { drained: true, last }
    if (performance.now() > deadline) return { drained: false, last }
    await sleep(POLL_MS)
  }
}

/** Rejects after `ms` with a message naming `what`: a broker that stalls must not hang the bench. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** A fresh destination of one sink: the SINK_URL naming it, its messages read back, and its deletion. */
interface Target {
  readonly sinkUrl: string
  read(): Promise<readonly Published[]>
  drop(): Promise<void>
}

/** The HTTP reference: a node:http server in this process answering 200; a message's id is its Idempotency-Key. */
async function httpTarget(): Promise<Target> {
  const received: Published[] = []
  const server: Server = createServer((request, response) => {
    const id = request.headers['idempotency-key']
    request.resume()
    request.on('end', () => {
      if (typeof id === 'string') received.push({ id, body: null })
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    sinkUrl: `http://127.0.0.1:${port}/events`,
    // Takes what arrived so far, as a queue's read does.
    read: async () => received.splice(0),
    async drop() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** A fresh destination on `kind` (`brokerUrl`: the broker, found reachable). */
async function target(kind: SinkKind, brokerUrl: string | undefined): Promise<Target> {
  if (kind === 'http') return httpTarget()
  return brokerTarget(kind, brokerUrl!, `bench.sink.${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`)
}

/** A port on 127.0.0.1 nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Messages read back, and how many distinct message ids among them. */
async function readBack(destination: Target): Promise<{ messages: number; distinct: number }> {
  const published = await within(destination.read(), READ_DEADLINE_MS, 'reading the destination back')
  return { messages: published.length, distinct: new Set(published.map((message) => message.id)).size }
}

// The brokers that answer; the others' rows are skipped with the reason.
const reachable = new Map<SinkKind, string | undefined>()
const skipped: string[] = []
for (const kind of SINKS) {
  if (!(kind in LABELS))
    throw new Error(`ADWIRE_BENCH_SINKS: unknown sink ${kind} (rabbitmq, redis, nats, http)`)
  if (kind === 'http') {
    reachable.set(kind, undefined)
    continue
  }
  const url = await resolveTestBroker(kind).catch(() => undefined)
  if (url) reachable.set(kind, url)
  else {
    const broker = BROKERS[kind]
    skipped.push(
      `${LABELS[kind]} rows skipped: ${process.env[broker.env] || broker.url} does not answer (set ${broker.env})`,
    )
  }
}

/** A store for the relay rows: the service's environment, the back-off reset, and its removal. */
interface RelayStore {
  readonly name: string
  readonly env: Record<string, string>
  /** Makes every pending event due now, unattempted and unleased; resolves with how many. */
  reset(): Promise<number>
  cleanup(): Promise<void>
}

/** The state acceptance writes for an event to relay (`forward_next_at` is its receipt). */
const RESET = (table: string) =>
  `UPDATE ${table} SET forward_next_at = received_at, forward_attempts = 0, forward_error = NULL,
     forward_lease_until = NULL, forward_fence = NULL WHERE forward_state = 'pending'`

function sqliteStore(): RelayStore {
  const directory = mkdtempSync(path.join(tmpdir(), 'adwire-bench-sink-'))
  const file = path.join(directory, 'r.sqlite')
  return {
    name: 'SQLite',
    env: { DATABASE_URL: `sqlite:${file}` },
    async reset() {
      const db = new DatabaseSync(file)
      try {
        return Number(db.prepare(RESET('receiver_events')).run().changes)
      } finally {
        db.close()
      }
    },
    async cleanup() {
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

function postgresStore(url: string): RelayStore {
  const schema = freshSchema('adwire_bench_sink')
  return {
    name: 'PostgreSQL',
    env: { DATABASE_URL: url, DATABASE_SCHEMA: schema },
    async reset() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        return (await client.query(RESET(`"${schema}".receiver_events`))).rowCount ?? 0
      } finally {
        await client.end()
      }
    },
    cleanup: () => dropSchema(url, schema),
  }
}

interface RelayRow {
  readonly store: string
  readonly sink: SinkKind
  /** Spawn → nothing pending, seconds; boot: spawn → `/health` answering. */
  readonly seconds?: number
  readonly boot?: number
  /** Pending when the service first answered, and the rate and CPU per event from then until drained. */
  readonly pendingAtReady?: number
  readonly readyRate?: number
  readonly cpu?: number
  readonly messages?: number
  readonly distinct?: number
  readonly note?: string
}

/**
 * One relay row: N events accepted while the relay cannot publish, the back-off reset, then the service again
 * with the real sink, timed until nothing is pending; the destination read back.
 */
async function relayRow(store: RelayStore, kind: SinkKind): Promise<RelayRow> {
  const row = { store: store.name, sink: kind }
  const destination = await target(kind, reachable.get(kind))
  try {
    // Filled: every publish refused (nothing listens), the events stay pending.
    const refused = `http://127.0.0.1:${await closedPort()}/refused`
    const filler = await spawnReceiver({ ...store.env, SINK_URL: refused })
    try {
      const url = await register(filler)
      await load(await presign(url, COUNT), 64)
      const { pending } = await forwarding(filler)
      if (pending !== COUNT)
        throw new Error(`expected ${COUNT} events pending after the fill, found ${pending}`)
    } finally {
      await filler.stop()
    }
    const reset = await store.reset()
    if (reset !== COUNT) throw new Error(`expected ${COUNT} pending events to reset, found ${reset}`)

    const began = performance.now()
    const service = await spawnReceiver({ ...store.env, SINK_URL: destination.sinkUrl })
    try {
      const ready = performance.now()
      const cpuReady = cpuOf([service.child.pid!])
      const { pending: pendingAtReady } = await forwarding(service)
      const { drained, last } = await untilDrained(service)
      const ended = performance.now()
      const cpu = cpuBetween(cpuReady, cpuOf([service.child.pid!]))
      if (!drained)
        return {
          ...row,
          note: `did not drain within ${DRAIN_DEADLINE_MS} ms: ${last.pending} pending, last error at ${last.last_error_at ?? 'none'}`,
        }
      const { messages, distinct } = await readBack(destination)
      const note =
        distinct === COUNT ? undefined : `expected ${COUNT} distinct message ids, read back ${distinct}`
      return {
        ...row,
        seconds: (ended - began) / 1000,
        boot: (ready - began) / 1000,
        pendingAtReady,
        ...(pendingAtReady > 0
          ? { readyRate: pendingAtReady / ((ended - ready) / 1000), cpu: (cpu * 1000) / pendingAtReady }
          : {}),
        messages,
        distinct,
        ...(note ? { note } : {}),
      }
    } finally {
      await service.stop()
    }
  } catch (error) {
    return { ...row, note: `failed: ${error instanceof Error ? error.message : String(error)}` }
  } finally {
    await within(destination.drop(), DROP_DEADLINE_MS, 'deleting the destination').catch(() => {})
  }
}

interface ReceiverRow {
  readonly sink: SinkKind | 'none'
  readonly inFlight: number
  readonly result?: LoadResult
  /** Service CPU ms per delivery during the load, and from the load's start until the relay drained. */
  readonly cpuLoad?: number
  readonly cpuDrained?: number
  /** Events pending when the load ended, and seconds until none was. */
  readonly pendingAtEnd?: number
  readonly drainSeconds?: number
  readonly note?: string
}

/**
 * The receiver rows of one sink (or none): a fresh SQLite service, warmed up, then {@link IN_FLIGHT} rows of
 * COUNT deliveries each; the destination read back after them (every accepted delivery, distinct ids).
 */
async function receiverRows(kind: SinkKind | 'none'): Promise<{ rows: ReceiverRow[]; readBack?: string }> {
  const store = sqliteStore()
  const destination = kind === 'none' ? undefined : await target(kind, reachable.get(kind))
  const rows: ReceiverRow[] = []
  try {
    const service = await spawnReceiver({
      ...store.env,
      ...(destination ? { SINK_URL: destination.sinkUrl } : {}),
    })
    try {
      const pid = service.child.pid!
      const url = await register(service)
      await load(await presign(url, WARMUP), 8)
      if (destination && !(await untilDrained(service)).drained) throw new Error('the warm-up did not drain')
      for (const inFlight of IN_FLIGHT) {
        const messages = await presign(url, COUNT)
        const before = cpuOf([pid])
        const result = await load(messages, inFlight)
        const afterLoad = cpuOf([pid])
        const perDelivery = (seconds: number) => (seconds * 1000) / COUNT
        if (!destination) {
          rows.push({ sink: kind, inFlight, result, cpuLoad: perDelivery(cpuBetween(before, afterLoad)) })
          continue
        }
        const loaded = performance.now()
        const { pending: pendingAtEnd } = await forwarding(service)
        const { drained, last } = await untilDrained(service)
        const drainSeconds = (performance.now() - loaded) / 1000
        rows.push({
          sink: kind,
          inFlight,
          result,
          cpuLoad: perDelivery(cpuBetween(before, afterLoad)),
          cpuDrained: perDelivery(cpuBetween(before, cpuOf([pid]))),
          pendingAtEnd,
          drainSeconds,
          ...(drained
            ? {}
            : { note: `did not drain within ${DRAIN_DEADLINE_MS} ms: ${last.pending} pending` }),
        })
        if (!drained) break
      }
    } finally {
      await service.stop()
    }
    if (!destination) return { rows }
    const expected = WARMUP + rows.length * COUNT
    const { messages, distinct } = await readBack(destination)
    return {
      rows,
      readBack:
        `${LABELS[kind as SinkKind]}: ${messages} messages read back, ${distinct} distinct ids ` +
        (distinct === expected ? `(every accepted delivery, ${expected})` : `(expected ${expected})`),
    }
  } catch (error) {
    rows.push({
      sink: kind,
      inFlight: 0,
      note: `failed: ${error instanceof Error ? error.message : String(error)}`,
    })
    return { rows }
  } finally {
    if (destination)
      await within(destination.drop(), DROP_DEADLINE_MS, 'deleting the destination').catch(() => {})
    await store.cleanup()
  }
}

/** Prints `table` (header first) with aligned columns, the first left-aligned. */
function print(table: string[][]): void {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]?.length ?? 0)))
  const format = (line: string[]) =>
    line
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd()
  console.log(format(table[0]!))
  console.log(widths.map((width) => '-'.repeat(width)).join('  '))
  for (const line of table.slice(1)) console.log(format(line))
}
const fixed = (value: number | undefined, digits: number) =>
  value === undefined ? '' : value.toFixed(digits)

console.log(
  [
    '',
    'Sinks (issue 27): the receiver service (node apps/receiver/dist/server.js) relaying into each sink.',
    `${COUNT} events per row; node ${process.version}; ${availableParallelism()} CPUs shared by the service, the brokers and this process.`,
    ...skipped,
    '',
  ].join('\n'),
)

const sinks = SINKS.filter((kind) => reachable.has(kind))

if (ROWS.includes('relay')) {
  const postgresUrl = STORES === 'sqlite' ? undefined : process.env.ADWIRE_TEST_POSTGRES_URL
  const relayRows: RelayRow[] = []
  for (const makeStore of [
    ...(STORES === 'postgres' ? [] : [sqliteStore]),
    ...(postgresUrl ? [() => postgresStore(postgresUrl)] : []),
  ]) {
    for (const kind of sinks) {
      const store = makeStore()
      try {
        relayRows.push(await relayRow(store, kind))
      } finally {
        await store.cleanup()
      }
    }
  }
  console.log(
    [
      'Relay: N events accepted while the sink was unreachable, then the service started with the sink;',
      'from start = spawn until /health shows nothing pending (boot included); after ready = from the first /health',
      'answer, over the events still pending then; svc CPU = the service process from ready until drained.',
      '',
    ].join('\n'),
  )
  print([
    [
      'store',
      'sink',
      'events',
      's from start',
      'events/s from start',
      'boot s',
      'pending at ready',
      'events/s after ready',
      'svc CPU ms/event',
      'messages',
      'distinct ids',
      'note',
    ],
    ...relayRows.map((row) => [
      row.store,
      LABELS[row.sink],
      String(COUNT),
      fixed(row.seconds, 2),
      row.seconds === undefined ? '' : (COUNT / row.seconds).toFixed(0),
      fixed(row.boot, 2),
      row.pendingAtReady === undefined ? '' : String(row.pendingAtReady),
      fixed(row.readyRate, 0),
      fixed(row.cpu, 3),
      row.messages === undefined ? '' : String(row.messages),
      row.distinct === undefined ? '' : String(row.distinct),
      row.note ?? '',
    ]),
  ])
  if (!postgresUrl && STORES !== 'sqlite')
    console.log('(PostgreSQL relay rows skipped: set ADWIRE_TEST_POSTGRES_URL)')
  console.log('')
}

if (ROWS.includes('receiver')) {
  const all: ReceiverRow[] = []
  const readBacks: string[] = []
  // No sink first and again last: the machine drifts during a run, the ratio is to the mean of both.
  for (const kind of ['none', ...sinks, 'none'] as const) {
    const { rows, readBack } = await receiverRows(kind)
    all.push(...rows)
    if (readBack) readBacks.push(readBack)
  }
  const baseline = (inFlight: number) => {
    const rates = all.flatMap((row) =>
      row.sink === 'none' && row.inFlight === inFlight && row.result ? [row.result.rate] : [],
    )
    return rates.length === 0 ? undefined : rates.reduce((sum, rate) => sum + rate, 0) / rates.length
  }
  console.log(
    [
      `Receiver on SQLite with and without a sink: ${COUNT} unique signed deliveries per row after ${WARMUP} to warm up,`,
      'each answered 200 accepted; ratio = deliveries/s ÷ the mean of the two no-sink rows at the same in flight',
      '(measured first and last in this run).',
      'svc CPU = the service process per delivery, during the load / from the load until its relay drained;',
      'pending at end = events not yet in the sink when the last delivery was answered; drain s = until none was.',
      '',
    ].join('\n'),
  )
  print([
    [
      'sink',
      'in flight',
      'deliveries/s',
      'p50 ms',
      'p99 ms',
      'ratio',
      'svc CPU ms load',
      'svc CPU ms drained',
      'pending at end',
      'drain s',
      'note',
    ],
    ...all.map((row) => {
      const base = baseline(row.inFlight)
      return [
        row.sink === 'none' ? 'none' : LABELS[row.sink],
        row.inFlight ? String(row.inFlight) : '',
        fixed(row.result?.rate, 0),
        fixed(row.result?.p50, 1),
        fixed(row.result?.p99, 1),
        row.result && base ? (row.result.rate / base).toFixed(2) : '',
        fixed(row.cpuLoad, 3),
        fixed(row.cpuDrained, 3),
        row.pendingAtEnd === undefined ? '' : String(row.pendingAtEnd),
        fixed(row.drainSeconds, 2),
        row.note ?? '',
      ]
    }),
  ])
  for (const line of readBacks) console.log(line)
  console.log('')
}
