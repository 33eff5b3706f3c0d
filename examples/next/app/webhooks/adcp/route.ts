/**
 * An AdCP webhook receiver as a Next.js App Router route handler (`app/webhooks/adcp/route.ts`): verifies each
 * delivery's RFC 9421 signature against the seller keys in JWKS_FILE, deduplicates it durably in SQLite under
 * DATA_DIR, and publishes each event once (here: one line on stdout). Answers as the reference receiver: 200
 * accepted/duplicate, 401, 409, 413, 415. A route handler gets the web Request with its raw body: no adapter.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { jwksResolver } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createWebhookReceiver, type Registration, type WebhookReceiver } from '@adwire/webhooks'

export const runtime = 'nodejs' // SQLite needs Node; see examples/workerd for a store on an edge runtime
export const dynamic = 'force-dynamic'

function openReceiver(): WebhookReceiver {
  const dataDir = process.env.DATA_DIR ?? 'data'
  const keys = jwksResolver(JSON.parse(readFileSync(process.env.JWKS_FILE ?? 'seller-jwks.json', 'utf8')))
  mkdirSync(dataDir, { recursive: true })
  const stores = openSqliteStores({ path: path.join(dataDir, 'webhooks.sqlite') })
  const registration: Registration = { id: 'adcp', auth: { mode: 'rfc9421', keys }, shape: 'mcp' }
  return createWebhookReceiver({
    registration: () => registration, // this route is the one URL given to the seller
    claims: stores.claims,
    convergence: stores.convergence,
    replayStore: stores.replay,
    // Acknowledged (200) only after this resolves: put the event somewhere durable (a queue, a table) here.
    publish: async (event) => {
      console.log(
        JSON.stringify({ published: event.idempotencyKey, task: event.taskId, status: event.status }),
      )
    },
  })
}

// One receiver (one SQLite connection) per process, also across the dev server's module reloads.
const shared = globalThis as { adcpReceiver?: WebhookReceiver }

export async function POST(request: Request): Promise<Response> {
  shared.adcpReceiver ??= openReceiver()
  // Next gives request.url on its own hostname (`localhost`); the seller signed the URL it was given
  // (`@target-uri`, `@authority`): PUBLIC_ORIGIN behind a proxy, else what the Host header names.
  const url = new URL(request.url)
  const origin = process.env.PUBLIC_ORIGIN ?? `${url.protocol}//${request.headers.get('host') ?? url.host}`
  const signed = new Request(new URL(url.pathname + url.search, origin), {
    method: request.method,
    headers: request.headers,
    body: request.body,
    duplex: 'half',
  } as RequestInit)
  return shared.adcpReceiver.handle(signed)
}
