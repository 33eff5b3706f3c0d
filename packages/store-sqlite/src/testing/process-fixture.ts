/**
 * A child process for src/processes.test.ts (started with `node --import tsx`), so that the tests exercise
 * separate processes sharing one file. Not part of the package. Usage: process-fixture.ts <mode> <path> [key]
 * - `race`: sends `started`; on `open` opens the file and sends `ready`; on `go` claims each key of the
 *   message in turn and sends their outcomes, then exits.
 * - `die`: claims `key` (lease 30 s at now 1000), sends its fence, then opens a write transaction, writes to it,
 *   sends `holding` and waits to be killed.
 * - `churn`: claims and completes keys `churn-0`, `churn-1`... as fast as it can, sending each key once
 *   `complete` resolved, until it is killed.
 */
import type { ClaimInput } from '@adwire/webhooks'
import { openSqliteStores } from '../open.js'

export type ParentMessage = { type: 'open' } | { type: 'go'; keys: string[] }
export type ChildMessage =
  | { type: 'started' }
  | { type: 'ready' }
  | { type: 'results'; results: string[] }
  | { type: 'claimed'; fence: string }
  | { type: 'holding' }
  | { type: 'completed'; key: string }

const [mode, path, key] = process.argv.slice(2)
if (!path || !process.send)
  throw new Error('usage: process-fixture.ts <mode> <path> [key] (with an IPC channel)')
const send = (message: ChildMessage) => process.send?.(message)
const claimInput = (claimKey: string): ClaimInput => ({
  namespace: 'webhook',
  scope: 'sender-1',
  key: claimKey,
  fingerprint: 'f'.repeat(64),
  now: 1_000,
  leaseSeconds: 30,
  retentionSeconds: 86_400,
})

if (mode === 'race') {
  let stores: ReturnType<typeof openSqliteStores> | undefined
  process.on('message', async (message: ParentMessage) => {
    if (message.type === 'open') {
      stores = openSqliteStores({ path })
      send({ type: 'ready' })
    } else if (stores) {
      const results: string[] = []
      for (const raceKey of message.keys) results.push((await stores.claims.claim(claimInput(raceKey))).kind)
      send({ type: 'results', results })
      stores.close()
      process.disconnect()
    }
  })
  send({ type: 'started' })
} else if (mode === 'die' && key) {
  const stores = openSqliteStores({ path })
  const result = await stores.claims.claim(claimInput(key))
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`)
  send({ type: 'claimed', fence: result.fence })
  stores.database.exec('BEGIN IMMEDIATE')
  const insert = stores.database.prepare(
    `INSERT INTO claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at) VALUES ('webhook', 'uncommitted', ?, 'x', 'processing', 'x', 0, 1e12)`,
  )
  for (let index = 0; index < 5_000; index += 1) insert.run(`junk-${index}`)
  send({ type: 'holding' })
  setInterval(() => undefined, 60_000)
} else if (mode === 'churn') {
  const stores = openSqliteStores({ path })
  for (let index = 0; ; index += 1) {
    const churnKey = `churn-${index}`
    const result = await stores.claims.claim(claimInput(churnKey))
    if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`)
    await stores.claims.complete(
      { namespace: 'webhook', scope: 'sender-1', key: churnKey, fence: result.fence },
      1_000,
      churnKey,
    )
    send({ type: 'completed', key: churnKey })
    // Let the IPC channel flush.
    await new Promise((resolve) => setImmediate(resolve))
  }
} else {
  throw new Error(`unknown mode ${mode}`)
}
