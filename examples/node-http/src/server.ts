/**
 * An AdCP webhook receiver on plain node:http: verifies each delivery's RFC 9421 signature against the seller
 * keys in JWKS_FILE, deduplicates it durably in SQLite under DATA_DIR, and publishes each event once (here: one
 * line on stdout). Answers as the reference receiver: 200 accepted/duplicate, 401, 409, 413, 415.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import path from 'node:path'
import { nodeHandler } from '@adwire/adapters/node'
import { jwksResolver } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createSweeper, createWebhookReceiver, type Registration } from '@adwire/webhooks'

const port = Number(process.env.PORT ?? 3000)
const dataDir = process.env.DATA_DIR ?? 'data'
const sellerKeys = jwksResolver(JSON.parse(readFileSync(process.env.JWKS_FILE ?? 'seller-jwks.json', 'utf8')))

mkdirSync(dataDir, { recursive: true })
const stores = openSqliteStores({ path: path.join(dataDir, 'webhooks.sqlite') })
const sweeper = createSweeper([stores])
sweeper.start()

// One registration: the URL given to the seller as push_notification_config.url.
const registration: Registration = { id: 'adcp', auth: { mode: 'rfc9421', keys: sellerKeys }, shape: 'mcp' }

const receiver = createWebhookReceiver({
  registration: (request) => (new URL(request.url).pathname === '/webhooks/adcp' ? registration : undefined),
  claims: stores.claims,
  convergence: stores.convergence,
  replayStore: stores.replay,
  // Acknowledged (200) only after this resolves: put the event somewhere durable (a queue, a table) here.
  publish: async (event) => {
    console.log(JSON.stringify({ published: event.idempotencyKey, task: event.taskId, status: event.status }))
  },
})

const server = createServer(nodeHandler((request) => receiver.handle(request)))
server.listen(port, '127.0.0.1', () => {
  const address = server.address()
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`)
})

process.on('SIGTERM', () => {
  sweeper.stop()
  server.close(() => stores.close())
})
