/**
 * An AdCP webhook receiver on Express 5: verifies each delivery's RFC 9421 signature against the seller keys in
 * JWKS_FILE, deduplicates it durably in SQLite under DATA_DIR, and publishes each event once (here: one line on
 * stdout). Answers as the reference receiver: 200 accepted/duplicate, 401, 409, 413, 415.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { captureRawBody, signatureOf, verifySignedRequests, webhookHandler } from '@adwire/adapters/express'
import { jwksResolver } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createSweeper, createWebhookReceiver, type Registration } from '@adwire/webhooks'
import express from 'express'

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

const app = express()
// Before express.json(): the signature covers the exact bytes, which a JSON parser would consume.
app.post(
  '/webhooks/adcp',
  webhookHandler((request) => receiver.handle(request)),
)
// The rest of the app parses JSON as usual, keeping the raw bytes (captureRawBody) for signature checks.
app.use(express.json({ verify: captureRawBody }))

// Buyer-signed requests (the AdCP RFC 9421 request profile) on /adcp/*, when BUYER_JWKS_FILE names the buyers' keys.
if (process.env.BUYER_JWKS_FILE) {
  const buyerKeys = jwksResolver(JSON.parse(readFileSync(process.env.BUYER_JWKS_FILE, 'utf8')))
  app.use('/adcp', verifySignedRequests({ keys: buyerKeys, profile: '3.2', replayStore: stores.replay }))
  app.post('/adcp/:operation', (req, res) => {
    const signature = signatureOf(res) // 'verified' (keyid, signer), or 'unsigned': decide per operation
    const signer = signature?.status === 'verified' ? signature.keyid : null
    res.json({ operation: req.params.operation, signer, body: req.body })
  })
}

const server = app.listen(port, '127.0.0.1', () => {
  const address = server.address()
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`)
})

process.on('SIGTERM', () => {
  sweeper.stop()
  server.close(() => stores.close())
})
