/**
 * Rows and bytes per delivery of the reference receiver service on PostgreSQL (its default path: the
 * transactional inbox): one service process on a fresh schema is sent COUNT unique signed deliveries (the mix
 * of `pnpm soak`: every delivery its own task, a quarter terminal `completed` with a result, a quarter with a
 * notification_id), each answered 200 `accepted`; then each table's rows, heap and index bytes per delivery
 * are read from the catalog (`storage:` lines) along with the average body size. Then the stores' DELETE
 * sweep of the expired records is timed (`sweep:` lines). docs/capacity.md builds its capacity model on these.
 *
 *   pnpm --filter @adwire/integration bench   (after `pnpm build`; needs ADWIRE_TEST_POSTGRES_URL)
 *   ADWIRE_BENCH_COUNT=600                    fewer deliveries (this bench sends twice the count)
 */
import { generateSigningKey, signWebhook } from '@adwire/http-signatures'
import { api, dropSchema, freshSchema, spawnReceiver } from '../src/receiver-support.js'
import { openPostgresStores } from '@adwire/store-postgres'
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

  // Expiry by DELETE sweeps: the stores' own sweep, run as if two days had passed (every claim, terminal
  // and nonce expired), timed. docs/capacity.md sets this against dropping time partitions whole.
  await receiver.stop()
  const stores = await openPostgresStores({ connectionString: postgresUrl, schema })
  try {
    const began = performance.now()
    const swept = await stores.sweep(Date.now() / 1000 + 2 * 86_400)
    const milliseconds = performance.now() - began
    const deleted = swept.claims + swept.convergence + swept.replay + swept.outbox
    console.log(
      `
sweep: ${deleted} expired rows deleted (claims ${swept.claims}, terminals ${swept.convergence}, ` +
        `nonces ${swept.replay}) in ${milliseconds.toFixed(0)} ms: ${((milliseconds * 1000) / deleted).toFixed(1)} µs a row, ` +
        `${(deleted / (milliseconds / 1000)).toFixed(0)} rows/s on one connection`,
    )
    const after = await storageOf(postgresUrl, schema, COUNT)
    const bytes = (tables: Storage['tables']) =>
      tables
        .filter((table) => ['claims', 'terminals', 'replay_nonces'].includes(table.table))
        .reduce((total, table) => total + table.tableBytes + table.indexBytes, 0)
    console.log(
      `sweep: claims, terminals and nonces took ${bytes(storage.tables)} bytes before and ${bytes(after.tables)} after ` +
        '(DELETE leaves the pages to VACUUM; they are not given back to the file system)',
    )
  } finally {
    await stores.close()
  }
} finally {
  await receiver.stop()
  await dropSchema(postgresUrl, schema)
}
