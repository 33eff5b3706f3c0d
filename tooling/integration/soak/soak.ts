/**
 * `pnpm soak`: exactly-once delivery of the reference receiver service under crashes, at volume.
 *
 * Two receiver processes (`node apps/receiver/dist/server.js`, the default path: the transactional inbox with
 * group commit) share one PostgreSQL schema. A load generator in this process plays several sellers (one key
 * and one registration each) and sends N unique deliveries to them, every attempt signed anew (its own nonce),
 * retrying connection errors and 503 answers as a seller retries them. A share of the deliveries is sent to
 * both processes at the same moment (the duplicate race across instances). At random points of the run one of
 * the processes is killed with SIGKILL, deliveries inside it included, and restarted on the same port; the
 * other keeps serving. At the end the published events are read from the receiver's own store (the
 * `receiver_events` table) and compared with what was sent:
 *
 *   lost      sent deliveries with no event row
 *   doubled   deliveries with more than one row, an event published more than once (`publications` > 1), or
 *             answered `accepted` more than once
 *   accepted  deliveries with exactly one event row published once (the goal: every delivery)
 *
 * Beside them it reports what PostgreSQL saw over the run: deadlocks (`pg_stat_database`, the whole database:
 * run it on a database of its own) and, sampled every second while sending, how often a backend of the database
 * waited on a lock (`pg_stat_activity`).
 *
 * The exit status is 0 only for 0 lost, 0 doubled and every delivery accepted.
 */
import { parseArgs } from 'node:util'
import { generateSigningKey, signWebhook, type AdcpJwk } from '@adwire/http-signatures'
import pg from 'pg'
import {
  RECEIVER_ENTRY,
  api,
  dropSchema,
  freshSchema,
  spawnReceiver,
  type ReceiverProcess,
} from '../src/receiver-support.js'

const HELP = `Usage: pnpm soak [options]        (builds first; or: node --import tsx tooling/integration/soak/soak.ts)

Sends unique signed deliveries to two reference receiver processes sharing one PostgreSQL schema, kills one
of them with SIGKILL at random moments (restarting it on the same port), sends a share of the deliveries to
both at once, then reads the receiver's store and prints lost / doubled / accepted (goal: 0 / 0 / all).

Options:
  --deliveries N        unique deliveries to send (default 1000000)
  --kills K             SIGKILLs at random points of the run (default: one per 10,000 deliveries, at least 2)
  --duplicates P        share of deliveries sent to both processes at the same moment (default 0.1)
  --in-flight F         deliveries under way at once (default 32; a duplicated one is two requests)
  --senders S           sellers, each with its own key and registration (default 1; the receiver lets
                        one key sustain 5,000 deliveries/s, its default maxNonceRatePerKey)
  --minutes M           stop starting new deliveries after M minutes, finish those under way, and verify
                        what was sent (the figures then name the number reached)
  --progress-seconds T  a progress line every T seconds (default 10)
  --seed X              seed of the random choices (default: random, printed)
  --postgres URL        the database (default: ADWIRE_TEST_POSTGRES_URL); a fresh schema is made and dropped
  --keep                keep the schema afterwards (its name is printed)
  -h, --help            this text
`

let parsed
try {
  parsed = parseArgs({
    options: {
      deliveries: { type: 'string', default: '1000000' },
      kills: { type: 'string' },
      duplicates: { type: 'string', default: '0.1' },
      'in-flight': { type: 'string', default: '32' },
      senders: { type: 'string', default: '1' },
      minutes: { type: 'string' },
      'progress-seconds': { type: 'string', default: '10' },
      seed: { type: 'string' },
      postgres: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    // `pnpm soak -- --deliveries 10` passes the `--` through.
    allowPositionals: true,
  })
} catch (error) {
  console.error(`${(error as Error).message}\n\n${HELP}`)
  process.exit(2)
}
const options = parsed.values
if (options.help) {
  process.stdout.write(HELP)
  process.exit(0)
}

function number(name: string, text: string, min: number, max: number, integer = true): number {
  const value = Number(text)
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    console.error(
      `--${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, not ${text}`,
    )
    process.exit(2)
  }
  return value
}
const N = number('deliveries', options.deliveries, 1, 100_000_000)
const KILLS = number('kills', options.kills ?? String(Math.max(2, Math.floor(N / 10_000))), 0, N)
const DUPLICATES = number('duplicates', options.duplicates, 0, 1, false)
const IN_FLIGHT = number('in-flight', options['in-flight'], 1, 4096)
const SENDERS = number('senders', options.senders, 1, 64)
const MINUTES = options.minutes === undefined ? Infinity : number('minutes', options.minutes, 0, 1e6, false)
const PROGRESS_SECONDS = number('progress-seconds', options['progress-seconds'], 0.1, 3600, false)
const SEED =
  options.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : number('seed', options.seed, 0, 2 ** 31)
const POSTGRES_URL = options.postgres ?? process.env.ADWIRE_TEST_POSTGRES_URL
if (!POSTGRES_URL) {
  console.error('the soak needs PostgreSQL: set ADWIRE_TEST_POSTGRES_URL or pass --postgres URL')
  process.exit(2)
}

/** mulberry32: a small seeded generator, so that the choices of a run can be replayed (timing aside). */
function generator(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = generator(SEED)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const began = performance.now()
const elapsed = () => {
  const seconds = Math.floor((performance.now() - began) / 1000)
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`
}
const say = (line: string) => process.stdout.write(`[soak ${elapsed()}] ${line}\n`)

// ---------------------------------------------------------------------------------------------------------
// The receivers.

const schema = freshSchema('adwire_soak')
const env = { DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema }
/** Log lines of the receivers that would mean a broken guarantee. */
const ALARMS = ['published_twice', '"recovered"'] as const
const alarms = new Map<string, number>()

interface Instance {
  readonly index: number
  process: ReceiverProcess
  port: number
  url: string
  up: boolean
  kills: number
}

/** Watches a receiver's output line by line for alarms (its log: a JSON line per delivery). */
function watcher() {
  let carry = ''
  return {
    keepOutput: 20_000,
    onOutput(text: string) {
      const lines = (carry + text).split('\n')
      carry = lines.pop() ?? ''
      for (const line of lines)
        for (const alarm of ALARMS)
          if (line.includes(alarm)) {
            alarms.set(alarm, (alarms.get(alarm) ?? 0) + 1)
            if ((alarms.get(alarm) ?? 0) <= 5) say(`receiver logged ${alarm}: ${line.slice(0, 400)}`)
          }
    },
  }
}

const spawn = (port = 0) => spawnReceiver(env, port, undefined, [], watcher())

say(
  `${N} deliveries, ${KILLS} kills, duplicates ${DUPLICATES}, ${IN_FLIGHT} in flight, ${SENDERS} senders, ` +
    `seed ${SEED}, schema ${schema}${Number.isFinite(MINUTES) ? `, at most ${MINUTES} minutes` : ''}`,
)
say(`receiver ${RECEIVER_ENTRY}`)
const instances: Instance[] = []
for (let index = 0; index < 2; index += 1) {
  // One after the other: the first creates the schema.
  const started = await spawn()
  instances.push({ index, process: started, port: started.port, url: started.url, up: true, kills: 0 })
}

interface Seller {
  readonly key: AdcpJwk
  readonly registration: string
}
const sellers: Seller[] = []
for (let index = 0; index < SENDERS; index += 1) {
  const { privateJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: `soak-${index}-${SEED}` })
  const created = await api(instances[index % 2]!.url, '/api/registrations', { auth: 'rfc9421', jwks })
  if (created.status !== 201)
    throw new Error(`registration failed: ${created.status} ${JSON.stringify(created.body)}`)
  sellers.push({ key: privateJwk, registration: created.body.id as string })
}

// ---------------------------------------------------------------------------------------------------------
// The deliveries. Delivery i: idempotency key `whk_soak_{seed}_{i}`, seller i % SENDERS, its own task.

const KEY_PREFIX = `whk_soak_${SEED}_`
const STATUSES = ['working', 'input-required', 'completed', 'working'] as const
const timestamp = new Date().toISOString()

function body(index: number): string {
  const status = STATUSES[index % STATUSES.length]!
  return JSON.stringify({
    idempotency_key: `${KEY_PREFIX}${index}`,
    // A quarter carry a notification_id (the re-emission record), half a terminal-convergence task.
    ...(index % 4 === 1 ? { notification_id: `ntf_soak_${SEED}_${index}` } : {}),
    operation_id: `op_soak_${index % 97}`,
    task_id: `task_soak_${SEED}_${index}`,
    task_type: 'create_media_buy',
    status,
    timestamp,
    ...(status === 'completed'
      ? { result: { media_buy_id: `mb_${index}`, packages: [] } }
      : { result: { percentage: index % 100, current_step: 'matching_inventory' } }),
  })
}

/** Answers `accepted` per delivery (more than one is a doubling seen from outside). */
const acceptedAnswers = new Uint8Array(N)
/** 1 once a delivery (each of its copies) was answered 200. */
const answered = new Uint8Array(N)
const counts = {
  issued: 0,
  done: 0,
  duplicated: 0,
  requests: 0,
  accepted: 0,
  duplicate: 0,
  otherOk: 0,
  connectionErrors: 0,
  unavailable: 0,
  inFlight503: 0,
  tooMany: 0,
  kills: 0,
}
/** Answers other than 200, 503 and 429, and deliveries given up: each is a failure of the run. */
const unexpected: string[] = []

const upInstances = () => instances.filter((instance) => instance.up)
function pick(preferred?: Instance): Instance | undefined {
  if (preferred?.up) return preferred
  const up = upInstances()
  return up.length === 0 ? undefined : up[Math.floor(random() * up.length)]
}

/** Sends one copy of delivery `index`, first to `first`, until a 200; retries go to a process that is up. */
async function send(index: number, first: Instance): Promise<void> {
  const seller = sellers[index % SENDERS]!
  const payload = body(index)
  let target: Instance | undefined = first
  for (let attempt = 1; attempt <= 2000; attempt += 1) {
    if (!target) {
      await sleep(20)
      target = pick()
      continue
    }
    const url = `${target.url}/webhooks/${seller.registration}`
    const signed = await signWebhook(
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: payload },
      { key: seller.key },
    )
    counts.requests += 1
    let status: number
    let text: string
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: signed.headers as Record<string, string>,
        body: payload,
        signal: AbortSignal.timeout(60_000),
      })
      status = response.status
      text = await response.text()
    } catch {
      // Refused (the process is down) or cut (killed with this request inside): a seller retries.
      counts.connectionErrors += 1
      await sleep(10 + random() * 40)
      target = pick()
      continue
    }
    if (status === 200) {
      const answer = (JSON.parse(text) as { status?: string }).status
      if (answer === 'accepted') {
        counts.accepted += 1
        acceptedAnswers[index] = Math.min(255, acceptedAnswers[index]! + 1)
      } else if (answer === 'duplicate') counts.duplicate += 1
      else {
        counts.otherOk += 1
        if (unexpected.length < 20) unexpected.push(`delivery ${index}: 200 ${text}`)
      }
      return
    }
    if (status === 503 || status === 429) {
      if (text.includes('delivery_in_flight')) counts.inFlight503 += 1
      else if (status === 429) counts.tooMany += 1
      else counts.unavailable += 1
      await sleep(status === 429 ? 100 : 10 + random() * 20)
      // A seller's retry reaches whichever process the balancer picks.
      target = random() < 0.5 ? pick() : pick(target)
      continue
    }
    unexpected.push(`delivery ${index}: ${status} ${text.slice(0, 300)}`)
    return
  }
  unexpected.push(`delivery ${index}: no 200 after 2000 attempts`)
}

async function deliver(index: number): Promise<void> {
  const first = pick() ?? instances[Math.floor(random() * 2)]!
  if (random() < DUPLICATES) {
    counts.duplicated += 1
    const second = instances[1 - first.index]!
    await Promise.all([send(index, first), send(index, second)])
  } else await send(index, first)
  answered[index] = 1
  counts.done += 1
}

// ---------------------------------------------------------------------------------------------------------
// The kills: at K random points of the run (counted in finished deliveries), one process, SIGKILL, and a
// restart on the same port after 0 to 300 ms. One process is down at a time.

// The points fall in the first 80% of the run, so that deliveries are still in flight when they come. A point
// passed while an earlier kill is still restarting its process fires as soon as that restart is done, so every
// kill asked for happens even when the run is short and fast.
const killAt = Array.from({ length: KILLS }, () => 1 + Math.floor(random() * Math.max(1, N * 0.8 - 1))).sort(
  (a, b) => a - b,
)
let nextKill = 0
let killing: Promise<void> | undefined

async function killOne(): Promise<void> {
  const victim = instances[Math.floor(random() * 2)]!
  victim.up = false
  await victim.process.kill()
  counts.kills += 1
  victim.kills += 1
  await sleep(random() * 300)
  for (let attempt = 1; ; attempt += 1) {
    try {
      victim.process = await spawn(victim.port)
      break
    } catch (error) {
      if (attempt >= 20) throw error
      say(`restart of process ${victim.index} failed (${(error as Error).message.split('\n')[0]}), again`)
      await sleep(250)
    }
  }
  victim.up = true
}

function maybeKill() {
  if (killing || nextKill >= killAt.length || counts.done < killAt[nextKill]!) return
  nextKill += 1
  killing = killOne().finally(() => {
    killing = undefined
    maybeKill()
  })
}

// ---------------------------------------------------------------------------------------------------------
// The run.

let last = { at: performance.now(), done: 0 }
const progress = setInterval(() => {
  const now = performance.now()
  const rate = (counts.done - last.done) / ((now - last.at) / 1000)
  last = { at: now, done: counts.done }
  say(
    `${counts.done}/${N} delivered (${rate.toFixed(0)}/s), ${counts.accepted} accepted, ${counts.duplicate} duplicate, ` +
      `${counts.kills}/${KILLS} kills, retries: ${counts.connectionErrors} connection, ${counts.inFlight503} in flight, ` +
      `${counts.unavailable} unavailable${unexpected.length ? `, ${unexpected.length} UNEXPECTED` : ''}`,
  )
}, PROGRESS_SECONDS * 1000)

// What PostgreSQL saw: deadlocks over the run, and lock waits sampled every second while sending.
const watch = new pg.Client({ connectionString: POSTGRES_URL })
await watch.connect()
const deadlockCount = async () => {
  await watch.query('SELECT pg_stat_clear_snapshot()')
  const { rows: found } = await watch.query<{ deadlocks: string }>(
    'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
  )
  return Number(found[0]?.deadlocks ?? 0)
}
const deadlocksBefore = await deadlockCount()
const lockSamples = { samples: 0, waiting: 0 }
let sampling = true
const sampler = (async () => {
  while (sampling) {
    const { rows: found } = await watch.query(
      `SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    )
    lockSamples.samples += 1
    if (found.length > 0) lockSamples.waiting += 1
    await sleep(1000)
  }
})()

const stopAt = began + MINUTES * 60_000
let next = 0
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (next < N && performance.now() < stopAt) {
      const index = next++
      counts.issued += 1
      await deliver(index)
      maybeKill()
    }
  }),
)
const sendSeconds = (performance.now() - began) / 1000
sampling = false
await sampler
while (killing) await killing
clearInterval(progress)
const issued = counts.issued
say(
  `sent ${issued} deliveries in ${sendSeconds.toFixed(0)} s (${(issued / sendSeconds).toFixed(0)}/s, ` +
    `${counts.requests} requests)${issued < N ? `: stopped at the ${MINUTES}-minute limit` : ''}`,
)

for (const instance of instances) await instance.process.stop()
// The statistics collector reports with a delay.
await sleep(700)
const deadlocks = (await deadlockCount()) - deadlocksBefore
await watch.end()

// ---------------------------------------------------------------------------------------------------------
// What the receiver published, read from its store.

const rows = new Uint8Array(N)
const doubledPublications = new Uint8Array(N)
let foreign = 0
let storedRows = 0
const client = new pg.Client({ connectionString: POSTGRES_URL })
await client.connect()
try {
  let after = 0
  for (;;) {
    const page = await client.query<{ seq: string; idempotency_key: string; publications: number }>(
      `SELECT seq, idempotency_key, publications FROM "${schema}".receiver_events
        WHERE seq > $1 AND registration_id = ANY($2) ORDER BY seq LIMIT 50000`,
      [after, sellers.map((seller) => seller.registration)],
    )
    if (page.rows.length === 0) break
    for (const row of page.rows) {
      storedRows += 1
      const index = row.idempotency_key.startsWith(KEY_PREFIX)
        ? Number(row.idempotency_key.slice(KEY_PREFIX.length))
        : NaN
      if (!Number.isInteger(index) || index < 0 || index >= issued) {
        foreign += 1
        continue
      }
      rows[index] = Math.min(255, rows[index]! + 1)
      if (row.publications !== 1) doubledPublications[index] = 1
    }
    after = Number(page.rows.at(-1)!.seq)
  }
} finally {
  await client.end()
  if (!options.keep) await dropSchema(POSTGRES_URL, schema)
}

let lost = 0
let doubled = 0
let accepted = 0
const examples: string[] = []
for (let index = 0; index < issued; index += 1) {
  const count = rows[index]!
  if (count === 0) {
    lost += 1
    if (examples.length < 10)
      examples.push(`lost: ${KEY_PREFIX}${index}${answered[index] ? ' (answered 200)' : ''}`)
  } else if (count > 1 || doubledPublications[index] || acceptedAnswers[index]! > 1) {
    doubled += 1
    if (examples.length < 10)
      examples.push(
        `doubled: ${KEY_PREFIX}${index} (${count} rows, accepted ${acceptedAnswers[index]} times${doubledPublications[index] ? ', publications > 1' : ''})`,
      )
  } else accepted += 1
}

const totalSeconds = (performance.now() - began) / 1000
console.log('')
console.log(`soak: ${issued} deliveries sent to two receiver processes on one PostgreSQL (seed ${SEED})`)
console.log(
  `  ${counts.kills} SIGKILLs (process 0: ${instances[0]!.kills}, process 1: ${instances[1]!.kills}), ` +
    `${counts.duplicated} deliveries sent to both processes at once, ${counts.requests} requests`,
)
console.log(
  `  answers: ${counts.accepted} accepted, ${counts.duplicate} duplicate, ${counts.otherOk} other 200; retried: ` +
    `${counts.connectionErrors} connection errors, ${counts.inFlight503} 503 delivery_in_flight, ` +
    `${counts.unavailable} other 503, ${counts.tooMany} 429`,
)
console.log(
  `  store: ${storedRows} event rows for the soak's registrations${foreign ? `, ${foreign} not sent by it` : ''}`,
)
for (const [alarm, count] of alarms) console.log(`  receiver log: ${count} lines with ${alarm}`)
for (const line of unexpected.slice(0, 20)) console.log(`  unexpected answer: ${line}`)
for (const line of examples) console.log(`  ${line}`)
console.log(
  `  ${(issued / sendSeconds).toFixed(0)} deliveries/s while sending; ${totalSeconds.toFixed(0)} s in all`,
)
console.log(
  `  PostgreSQL: ${deadlocks} deadlocks; a backend waiting on a lock in ${lockSamples.waiting} of ` +
    `${lockSamples.samples} samples (one a second while sending)`,
)
console.log(`lost ${lost} / doubled ${doubled} / accepted ${accepted} of ${issued}`)
const ok =
  lost === 0 &&
  doubled === 0 &&
  accepted === issued &&
  unexpected.length === 0 &&
  foreign === 0 &&
  alarms.size === 0
console.log(ok ? 'soak: PASS' : 'soak: FAIL')
process.exit(ok ? 0 : 1)
