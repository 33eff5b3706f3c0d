/**
 * A receiver process that dies inside its publish callback (SIGKILL, no cleanup), for the crash tests.
 * Usage: node --import tsx crash-child.ts <config.json>
 * config: { store: { kind: 'sqlite', path } | { kind: 'postgres', url, schema }, jwks, sender, request: { url, headers, body }, leaseSeconds }
 */
import { readFileSync } from 'node:fs'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createWebhookReceiver } from '@adwire/webhooks'

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8'))
const stores =
  config.store.kind === 'sqlite'
    ? openSqliteStores({ path: config.store.path })
    : await openPostgresStores({ connectionString: config.store.url, schema: config.store.schema })
const receiver = createWebhookReceiver({
  registration: () => ({ id: 'seller', auth: { mode: 'rfc9421', keys: config.jwks }, sender: config.sender }),
  claims: stores.claims,
  convergence: stores.convergence,
  replayStore: stores.replay,
  limits: { leaseSeconds: config.leaseSeconds },
  publish: async () => {
    process.stdout.write('publishing\n')
    process.kill(process.pid, 'SIGKILL')
    await new Promise(() => {})
  },
})
await receiver.handle(
  new Request(config.request.url, {
    method: 'POST',
    headers: config.request.headers,
    body: config.request.body,
  }),
)
process.stdout.write('not killed\n')
