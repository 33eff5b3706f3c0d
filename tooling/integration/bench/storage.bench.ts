/**
 * Rows and bytes per delivery of the reference receiver service on PostgreSQL (its default path: the
 * transactional inbox): one service process on a fresh schema is sent COUNT unique signed deliveries (the mix
 * of `pnpm soak`: every delivery its own task, a quarter terminal `completed` with a result, a quarter with a
 * notification_id), each answered 200 `accepted`; then each table's rows, heap and index bytes per delivery
 * are read from the catalog (`storage:` lines) along with the average body size. Then the stores' sweep of
 * the expired records (generations dropped whole) is timed (`sweep:` lines). docs/capacity.md builds its
 * capacity model on these.
 * Then expiry at a steady rate (`expiry:` lines, bench/expiry.ts): the sender's outbox and webhook_activity over
 * 48 simulated hours, on PostgreSQL (time partitions dropped whole) and on SQLite (DELETE sweeps), with their
 * bytes at hour 24 and hour 48, and one partition dropped against the same rows deleted; and the claims, terminal
 * records and nonces of the inbox at a steady rate over 48 simulated hours (generations dropped whole), with
 * their bytes at hour 24 and hour 48 and the times of their hourly sweeps. Then the receiver's own
 * `receiver_events` the same way (`[expiry postgres receiver_events]`, `[expiry sqlite receiver_events]`,
 * bench/events-expiry.ts): a day's retention, so that hour 48 holds what hour 24 did.
 *
 *   pnpm --filter @adwire/integration bench   (after `pnpm build`; needs ADWIRE_TEST_POSTGRES_URL)
 *   ADWIRE_BENCH_COUNT=600                    fewer deliveries (this bench sends twice the count)
 *   ADWIRE_BENCH_RATE=500                     outbox entries a simulated hour in the expiry part
 *   ADWIRE_BENCH_DROP_ROWS=200000             rows of the partition dropped against the same rows deleted
 *   ADWIRE_BENCH_INBOX_RATE=1000              inbox deliveries a simulated hour in the generations part
 *   ADWIRE_BENCH_EVENT_RATE=1000              receiver events a simulated hour in the receiver_events expiry
 *   node --import tsx bench/storage.bench.ts  this file alone
 */
import { generateSigningKey, signWebhook } from '@adwire/http-signatures'
import { api, dropSchema, freshSchema, spawnReceiver } from '../src/receiver-support.js'
import { OUTBOX_PARTITIONS, openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { expiryPostgresReceiverEvents, expirySqliteReceiverEvents } from './events-expiry.js'
import { HOUR, simulate } from './expiry.js'
import { printStorage, storageOf, type Storage } from './storage.js'

const COUNT = Number(process.env.ADWIRE_BENCH_COUNT ?? 2000) * 2
const IN_FLIGHT = 16
const postgresUrl = process.env.ADWIRE_TEST_POSTGRES_URL
if (!postgresUrl) {
  console.log('\nReceiver storage bench skipped: set ADWIRE_TEST_POSTGRES_URL')
  process.exit(0)
}

const schema = freshSchema('adwire_bench_storage')
const receiver = await spawnReceiver({ DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema })
try {
  const { privateJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'bench-storage' })
  const created = await api(receiver.url, '/api/registrations', { auth: 'rfc9421', jwks })
  if (created.status !== 201) throw new Error(`registration failed: ${created.status}`)
  const url = `${receiver.url}/webhooks/${created.body.id as string}`
  const timestamp = new Date().toISOString()
  let bodyBytes = 0
  let next = 0
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < COUNT) {
        const index = next++
        const completed = index % 4 === 2
        const body = JSON.stringify({
          idempotency_key: `whk_${crypto.randomUUID()}`,
          ...(index % 4 === 1 ? { notification_id: `ntf_${crypto.randomUUID()}` } : {}),
          operation_id: `op_bench_${index % 97}`,
          task_id: `task_${crypto.randomUUID()}`,
          task_type: 'create_media_buy',
          status: completed ? 'completed' : index % 4 === 1 ? 'input-required' : 'working',
          timestamp,
          result: completed
            ? { media_buy_id: `mb_${index}`, packages: [] }
            : { percentage: index % 100, current_step: 'matching_inventory' },
        })
        bodyBytes += Buffer.byteLength(body)
        const signed = await signWebhook(
          { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
          { key: privateJwk },
        )
        const response = await fetch(url, {
          method: 'POST',
          headers: signed.headers as Record<string, string>,
          body,
        })
        const text = await response.text()
        if (response.status !== 200 || !text.includes('"accepted"'))
          throw new Error(`a delivery was not accepted: ${response.status} ${text}`)
      }
    }),
  )
  // The nonces are counted as written: they expire 360 s after signing at most, sooner than anything else.
  const storage = await storageOf(postgresUrl, schema, COUNT)
  console.log(
    `\nReceiver storage: ${COUNT} deliveries to one service process on PostgreSQL (transactional inbox), ` +
      `average body ${(bodyBytes / COUNT).toFixed(0)} B, before any sweep.`,
  )
  printStorage('receiver, transactional inbox', storage)

  // Expiry by the stores' own sweep, run as if two days had passed (every claim, terminal and nonce expired),
  // timed: since migration 6 the generations are rotated and dropped whole. docs/capacity.md sets this against
  // dropping time partitions.
  await receiver.stop()
  const stores = await openPostgresStores({ connectionString: postgresUrl, schema })
  try {
    const began = performance.now()
    const swept = await stores.sweep(Date.now() / 1000 + 2 * 86_400)
    const milliseconds = performance.now() - began
    const deleted = swept.claims + swept.convergence + swept.replay + swept.outbox
    console.log(
      `
sweep: ${deleted} expired rows dropped (claims ${swept.claims}, terminals ${swept.convergence} as estimated, ` +
        `nonces ${swept.replay}) in ${milliseconds.toFixed(0)} ms, by rotating the generations and dropping them whole`,
    )
    const after = await storageOf(postgresUrl, schema, COUNT)
    const bytes = (tables: Storage['tables']) =>
      tables
        .filter((table) => /^(claims|terminals|replay_nonces)_g[0-9]+$/.test(table.table))
        .reduce((total, table) => total + table.tableBytes + table.indexBytes, 0)
    console.log(
      `sweep: claims, terminals and nonces took ${bytes(storage.tables)} bytes before and ${bytes(after.tables)} after ` +
        '(dropped partitions give their files back to the file system)',
    )
  } finally {
    await stores.close()
  }
} finally {
  await receiver.stop()
  await dropSchema(postgresUrl, schema)
}

// Expiry at a steady rate, on the stores' simulated clock (bench/expiry.ts).
const RATE = Number(process.env.ADWIRE_BENCH_RATE ?? 500)
/** The retry horizon of the simulated entries: their deadline is six hours after creation. */
const HORIZON = 6 * HOUR
/** A day's start on the simulated clock. */
const START = 1_799_971_200
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(2)} MB`
{
  const expirySchema = freshSchema('adwire_bench_expiry')
  const stores = await openPostgresStores({
    connectionString: postgresUrl,
    schema: expirySchema,
    now: () => START,
  })
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  const bytesOf = async (table: string) => {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree($1::regclass) WHERE isleaf`,
      [`"${expirySchema}".${table}`],
    )
    return Number(rows[0]!.bytes)
  }
  try {
    let outboxBytes = { at24: 0, at48: 0 }
    const result = await simulate(
      stores.outbox,
      (now) => stores.sweep(now),
      async () => {
        const outbox = await bytesOf('outbox')
        if (outboxBytes.at24 === 0) outboxBytes = { at24: outbox, at48: 0 }
        else outboxBytes = { ...outboxBytes, at48: outbox }
        return outbox + (await bytesOf('webhook_activity'))
      },
      { start: START, rate: RATE, horizon: HORIZON, tag: 'pg' },
    )
    const activity = {
      at24: result.bytes.at24 - outboxBytes.at24,
      at48: result.bytes.at48 - outboxBytes.at48,
    }
    console.log(
      `\nexpiry: PostgreSQL, ${RATE} outbox entries a simulated hour for 48 h (${result.entries} in all, each delivered, deadline 6 h after creation), swept hourly by dropping partitions:`,
    )
    console.log(
      `expiry: postgres outbox bytes at hour 24 ${mb(outboxBytes.at24)}, at hour 48 ${mb(outboxBytes.at48)}`,
    )
    console.log(
      `expiry: postgres webhook_activity bytes at hour 24 ${mb(activity.at24)}, at hour 48 ${mb(activity.at48)} (kept 30 days: it grows until day 31)`,
    )
    console.log(
      `expiry: postgres hourly sweeps ${result.sweepMs.toFixed(0)} ms in all, slowest ${result.slowestSweepMs.toFixed(0)} ms`,
    )
  } finally {
    await client.end()
    await stores.close()
    await dropSchema(postgresUrl, expirySchema)
  }
}
// Claims, terminal records and nonces at a steady rate (migration 6: generations dropped whole): the inbox fed
// INBOX_RATE deliveries a simulated hour for 48 hours (each a nonce living 6 minutes and a claim kept 24 hours,
// every fourth a terminal observation kept 24 hours), each store swept every simulated hour, with the bytes of
// each table family (rows and counters, every partition) at hour 24 and hour 48.
const INBOX_RATE = Number(process.env.ADWIRE_BENCH_INBOX_RATE ?? 1_000)
{
  const generationsSchema = freshSchema('adwire_bench_generations')
  const stores = await openPostgresStores({
    connectionString: postgresUrl,
    schema: generationsSchema,
    now: () => START,
  })
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  const families = {
    claims: ['claims', 'claim_scope_counts'],
    terminals: ['terminals'],
    nonces: ['replay_nonces', 'replay_key_counts'],
  } as const
  type Family = keyof typeof families
  const bytesOf = async (family: Family) => {
    let total = 0
    for (const table of families[family]) {
      const { rows } = await client.query<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree($1::regclass) WHERE isleaf`,
        [`"${generationsSchema}".${table}`],
      )
      total += Number(rows[0]!.bytes)
    }
    return total
  }
  const sweeps: Record<Family, (now: number) => Promise<number>> = {
    claims: (now) => stores.claims.sweep(now),
    terminals: (now) => stores.convergence.sweep(now),
    nonces: (now) => stores.replay.sweep(now),
  }
  const bytes: Record<Family, number[]> = { claims: [], terminals: [], nonces: [] }
  const sweepMs: Record<Family, number[]> = { claims: [], terminals: [], nonces: [] }
  const dropped: Record<Family, number> = { claims: 0, terminals: 0, nonces: 0 }
  try {
    const inbox = stores.createInbox({ write: async () => {} })
    const BATCH = 100
    let deliveries = 0
    for (let hour = 0; hour < 48; hour += 1) {
      for (let first = 0; first < INBOX_RATE; first += BATCH) {
        const now = START + hour * HOUR + (first / INBOX_RATE) * HOUR
        await Promise.all(
          Array.from({ length: Math.min(BATCH, INBOX_RATE - first) }, async (_, offset) => {
            const index = first + offset
            const key = `whk_${hour}_${index}_000000000000`
            const seller = `seller-${index % 8}`
            const outcome = await inbox.accept({
              nonce: {
                keyid: `kid-${seller}`,
                nonce: `nonce-${hour}-${index}`,
                expiresAt: now + 360,
                cap: 1_000_000,
              },
              claim: {
                namespace: 'webhook',
                scope: seller,
                key,
                fingerprint: 'f'.repeat(64),
                now,
                leaseSeconds: 30,
                retentionSeconds: 86_400,
                maxPerScope: 1_000_000,
              },
              ...(index % 4 === 2
                ? {
                    observation: {
                      sender: seller,
                      taskId: `task_${hour}_${index}`,
                      terminal: true,
                      comparison: 'c'.repeat(64),
                      deliveryKey: key,
                      now,
                      leaseSeconds: 30,
                      retentionSeconds: 86_400,
                    },
                  }
                : {}),
              event: {
                registrationId: 'bench',
                sender: seller,
                shape: 'mcp',
                idempotencyKey: key,
                terminal: index % 4 === 2,
                data: null,
                payload: {},
                body: new Uint8Array(),
                receivedAt: now,
              },
            })
            if (outcome.kind !== 'published') throw new Error(`a delivery was not published: ${outcome.kind}`)
          }),
        )
        deliveries += Math.min(BATCH, INBOX_RATE - first)
      }
      const now = START + (hour + 1) * HOUR
      for (const family of Object.keys(families) as Family[]) {
        const began = performance.now()
        dropped[family] += await sweeps[family](now)
        sweepMs[family].push(performance.now() - began)
      }
      if (hour === 23 || hour === 47)
        for (const family of Object.keys(families) as Family[]) bytes[family].push(await bytesOf(family))
    }
    console.log(
      `\nexpiry: PostgreSQL, ${INBOX_RATE} inbox deliveries a simulated hour for 48 h (${deliveries} in all: a nonce ` +
        'living 6 min and a claim kept 24 h each, every fourth a terminal record kept 24 h), swept hourly by rotating ' +
        'generations and dropping those expired whole (claims and terminals a generation every 6 h, nonces every hour):',
    )
    for (const family of Object.keys(families) as Family[]) {
      const times = sweepMs[family]
      const total = times.reduce((sum, value) => sum + value, 0)
      console.log(
        `expiry: postgres ${family} bytes at hour 24 ${mb(bytes[family][0]!)}, at hour 48 ${mb(bytes[family][1]!)}; ` +
          `${dropped[family]} rows dropped; hourly sweeps ${total.toFixed(0)} ms in all, slowest ${Math.max(...times).toFixed(0)} ms, ` +
          `median ${[...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!.toFixed(0)} ms`,
      )
    }
  } finally {
    await client.end()
    await stores.close()
    await dropSchema(postgresUrl, generationsSchema)
  }
}
// One generation of N expired claims dropped by the claims' maintenance (rotation, then the drop of the
// generation with its counters), against N expired claims deleted and vacuumed; at a tenth of N and at N.
for (const N of [
  Math.round(Number(process.env.ADWIRE_BENCH_DROP_ROWS ?? 200_000) / 10),
  Number(process.env.ADWIRE_BENCH_DROP_ROWS ?? 200_000),
]) {
  const claimsSchema = freshSchema('adwire_bench_claims_drop')
  const stores = await openPostgresStores({
    connectionString: postgresUrl,
    schema: claimsSchema,
    now: () => START,
  })
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  const fill = async (generation: number) => {
    await client.query(
      `INSERT INTO "${claimsSchema}".claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result, generation)
       SELECT 'webhook', 'seller-' || (i % 8), 'whk_' || $1::text || '_' || i || '_000000000000', repeat('f', 64), 'completed',
              md5(i::text), $2::float8 + 30, $2::float8 + 100, NULL, $1::bigint
         FROM generate_series(1, $3::int) i`,
      [generation, START, N],
    )
    await client.query(
      `INSERT INTO "${claimsSchema}".claim_scope_counts (namespace, scope, generation, stripe, records)
       SELECT 'webhook', 'seller-' || s, $1::bigint, 0, count(*) FROM generate_series(1, $2::int) i, LATERAL (SELECT i % 8 AS s) x
        GROUP BY s`,
      [generation, N],
    )
  }
  try {
    await fill(1)
    await fill(2)
    await client.query(`ANALYZE "${claimsSchema}".claims`)
    const maintained = await stores.claims.maintain(START + 6 * HOUR)
    if (!maintained.dropped.includes('claims_g1')) throw new Error('generation 1 was not dropped')
    const began = performance.now()
    await client.query(`DELETE FROM "${claimsSchema}".claims WHERE generation = 2 AND expires_at <= $1`, [
      START + 6 * HOUR,
    ])
    const deleteMs = performance.now() - began
    const vacuumBegan = performance.now()
    await client.query(`VACUUM "${claimsSchema}".claims_g2`)
    const vacuumMs = performance.now() - vacuumBegan
    const perRow = (milliseconds: number) => ((milliseconds * 1000) / N).toFixed(2)
    console.log(
      `expiry: postgres one generation of ${N} expired claims rotated in ${maintained.rotateMs.toFixed(1)} ms and dropped ` +
        `with its counters in ${maintained.dropMs.toFixed(1)} ms (${perRow(maintained.dropMs)} µs a row; the tables locked while detaching: ` +
        `${maintained.detachMs.toFixed(1)} ms); the same ${N} deleted in ${deleteMs.toFixed(0)} ms (${perRow(deleteMs)} µs a row) ` +
        `and vacuumed in ${vacuumMs.toFixed(0)} ms (${perRow(vacuumMs)} µs a row)`,
    )
  } finally {
    await client.end()
    await stores.close()
    await dropSchema(postgresUrl, claimsSchema)
  }
}
// One partition of N finished entries dropped, against N finished entries deleted (the default partition's
// DELETE, the path of rows outside the partitions), both by the stores' maintenance; at a tenth of N and at N.
const DROP_ROWS = Number(process.env.ADWIRE_BENCH_DROP_ROWS ?? 200_000)
for (const N of [Math.round(DROP_ROWS / 10), DROP_ROWS]) {
  const dropSchemaName = freshSchema('adwire_bench_drop')
  const stores = await openPostgresStores({
    connectionString: postgresUrl,
    schema: dropSchemaName,
    now: () => START,
  })
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  const fill = (deadline: number) =>
    client.query(
      `INSERT INTO "${dropSchemaName}".outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at, deadline_at, state, attempts)
       SELECT 'e' || $2::text || '-' || i, 'buyer-' || (i % 8), 'https://buyer.example/webhooks/1', 'whk_' || i || '_0000000000000000',
              '{"status":"working","percentage":' || (i % 100) || '}', '{"content-type":"application/json"}', NULL, $1::float8, $1::float8, $1::float8 + 100, 'delivered', 1
         FROM generate_series(1, $3::int) i`,
      [deadline, String(deadline), N],
    )
  try {
    await fill(START)
    await fill(1_000)
    await client.query(`ANALYZE "${dropSchemaName}".outbox`)
    const dropped = await stores.outbox.maintain(OUTBOX_PARTITIONS, START + 6 * HOUR)
    // The DELETE frees nothing by itself: VACUUM then clears the dead rows and their index entries.
    const vacuumBegan = performance.now()
    await client.query(`VACUUM "${dropSchemaName}".outbox_default`)
    const vacuumMs = performance.now() - vacuumBegan
    const perRow = (milliseconds: number) => ((milliseconds * 1000) / N).toFixed(2)
    console.log(
      `expiry: postgres one partition of ${N} finished entries dropped in ${dropped.dropMs.toFixed(1)} ms ` +
        `(${perRow(dropped.dropMs)} µs a row; the table locked while detaching it: ${dropped.detachMs.toFixed(1)} ms); the same ${N} deleted from the default partition in ` +
        `${dropped.deleteMs.toFixed(0)} ms (${perRow(dropped.deleteMs)} µs a row) and vacuumed in ${vacuumMs.toFixed(0)} ms ` +
        `(${perRow(vacuumMs)} µs a row)`,
    )
  } finally {
    await client.end()
    await stores.close()
    await dropSchema(postgresUrl, dropSchemaName)
  }
}
{
  const directory = mkdtempSync(join(tmpdir(), 'adwire-expiry-'))
  const stores = openSqliteStores({ path: join(directory, 'stores.db') })
  const fileBytes = () => {
    const pages = stores.database.pragma('page_count', { simple: true }) as number
    const size = stores.database.pragma('page_size', { simple: true }) as number
    return Promise.resolve(pages * size)
  }
  try {
    const result = await simulate(stores.outbox, (now) => stores.sweep(now), fileBytes, {
      start: START,
      rate: RATE,
      horizon: HORIZON,
      tag: 'sqlite',
    })
    console.log(
      `\nexpiry: SQLite, the same ${result.entries} entries, swept hourly by DELETE (finished entries and activity kept 30 days):`,
    )
    console.log(
      `expiry: sqlite file bytes at hour 24 ${mb(result.bytes.at24)}, at hour 48 ${mb(result.bytes.at48)}; hourly sweeps ${result.sweepMs.toFixed(0)} ms in all`,
    )
    const began = performance.now()
    const swept = await stores.sweep(START + 48 * HOUR + HORIZON + 30 * 86_400 + 1)
    const milliseconds = performance.now() - began
    const rows = swept.outbox * 2
    console.log(
      `expiry: sqlite DELETE sweep of ${swept.outbox} entries and their ${swept.outbox} activity rows in ${milliseconds.toFixed(0)} ms ` +
        `(${((milliseconds * 1000) / rows).toFixed(1)} µs a row); file ${mb(await fileBytes())} after (freed pages are reused, not returned)`,
    )
  } finally {
    stores.close()
    rmSync(directory, { recursive: true, force: true })
  }
}

// The receiver's events at a steady rate, kept one day (bench/events-expiry.ts).
const EVENT_RATE = Number(process.env.ADWIRE_BENCH_EVENT_RATE ?? 1000)
await expiryPostgresReceiverEvents(postgresUrl, { start: START, rate: EVENT_RATE })
await expirySqliteReceiverEvents({ start: START, rate: EVENT_RATE })
