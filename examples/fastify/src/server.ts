/**
 * An AdCP webhook receiver on Fastify 5: verifies each delivery's RFC 9421 signature against the seller keys in
 * JWKS_FILE, deduplicates it durably in SQLite under DATA_DIR, and publishes each event once (here: one line on
 * stdout). Answers as the reference receiver: 200 accepted/duplicate, 401, 409, 413, 415.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { adcpRequestSigning, adcpWebhooks } from '@adwire/adapters/fastify'
import { jwksResolver } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createSweeper, createWebhookReceiver, type Registration } from '@adwire/webhooks'
import Fastify from 'fastify'

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

const app = Fastify()
// The plugin's own content-type parser hands the receiver the untouched body (Fastify's JSON parser would
// consume the bytes the signature covers); other routes keep Fastify's parsers.
await app.register(adcpWebhooks, { path: '/webhooks/adcp', handle: (request) => receiver.handle(request) })

// Buyer-signed requests (the AdCP RFC 9421 request profile) on /adcp/*, when BUYER_JWKS_FILE names the buyers' keys.
if (process.env.BUYER_JWKS_FILE) {
  const buyerKeys = jwksResolver(JSON.parse(readFileSync(process.env.BUYER_JWKS_FILE, 'utf8')))
  await app.register(async (scope) => {
    await scope.register(adcpRequestSigning, { keys: buyerKeys, profile: '3.2', replayStore: stores.replay })
    scope.post<{ Params: { operation: string } }>('/adcp/:operation', async (request) => {
      const signature = request.adcpSignature // 'verified' (keyid, signer), or 'unsigned': decide per operation
      const signer = signature?.status === 'verified' ? signature.keyid : null
      return { operation: request.params.operation, signer, body: request.body }
    })
  })
}

const address = await app.listen({ port, host: '127.0.0.1' })
console.log(`listening on ${address}`)

process.on('SIGTERM', () => {
  sweeper.stop()
  void app.close().then(() => stores.close())
})
