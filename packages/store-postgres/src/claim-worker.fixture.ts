/**
 * A child process for the cross-process tests (run with `node --import tsx`). Arguments: url, schema, mode.
 * - `claim-many <count>`: opens the stores, prints `ready`, waits for `go` on standard input, claims keys
 *   0..count-1 all at once, prints one JSON line `{ key: kind }` and exits;
 * - `hold <key>`: claims one key at now=1000 with a 30 s lease, prints the result as JSON and waits to be killed.
 */
import { openPostgresStores } from './open.js'

const [url, schema, mode, argument] = process.argv.slice(2)
if (!url || !schema || !mode || !argument)
  throw new Error('usage: claim-worker.fixture.ts URL SCHEMA MODE ARGUMENT')
const stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 8 })
const base = {
  namespace: 'webhook',
  scope: 'sender-1',
  fingerprint: 'f'.repeat(64),
  leaseSeconds: 30,
  retentionSeconds: 86_400,
} as const

if (mode === 'claim-many') {
  process.stdout.write('ready\n')
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()))
  process.stdin.destroy()
  const keys = Array.from({ length: Number(argument) }, (_, index) => `key-${index}`)
  // Each process walks the keys in its own order, so that they collide in every pattern.
  keys.sort(() => Math.random() - 0.5)
  const results = await Promise.all(
    keys.map(async (key) => [key, (await stores.claims.claim({ ...base, key, now: 1_000 })).kind] as const),
  )
  process.stdout.write(`${JSON.stringify(Object.fromEntries(results))}\n`)
  await stores.close()
} else if (mode === 'hold') {
  const result = await stores.claims.claim({ ...base, key: argument, now: 1_000 })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  setInterval(() => {}, 60_000)
} else {
  throw new Error(`unknown mode ${mode}`)
}
