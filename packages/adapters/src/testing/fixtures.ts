/**
 * Test support (not exported by the package): a receiver on memory stores trusting one fresh seller key,
 * deliveries and requests signed with it, and a server on 127.0.0.1.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  generateSigningKey,
  MemoryReplayStore,
  signRequest,
  signWebhook,
  type AdcpJwk,
  type Jwks,
} from '@adwire/http-signatures'
import {
  createWebhookReceiver,
  MemoryClaimStore,
  MemoryConvergenceStore,
  type ReceivedEvent,
} from '@adwire/webhooks'
import { onTestFinished } from 'vitest'

export interface Keys {
  seller: { privateJwk: AdcpJwk; jwks: Jwks }
  buyer: { privateJwk: AdcpJwk; jwks: Jwks }
}

export async function keys(): Promise<Keys> {
  return {
    seller: await generateSigningKey({ alg: 'ed25519', kid: 'seller-1', adcpUse: 'webhook-signing' }),
    buyer: await generateSigningKey({ alg: 'ed25519', kid: 'buyer-1', adcpUse: 'request-signing' }),
  }
}

/** A webhook receiver for `/webhooks/adcp` on memory stores; `published` lists what it published. */
export function memoryReceiver(jwks: Jwks) {
  const published: ReceivedEvent[] = []
  const receiver = createWebhookReceiver({
    registration: (request) =>
      new URL(request.url).pathname === '/webhooks/adcp'
        ? { id: 'adcp', auth: { mode: 'rfc9421', keys: jwks }, shape: 'mcp' }
        : undefined,
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    publish: async (event) => void published.push(event),
  })
  return { receiver, published }
}

/** An MCP-shape task webhook; the spaces and the non-ASCII text make any re-encoding change the bytes. */
export const webhookBody = () =>
  `{ "idempotency_key": "whk_${crypto.randomUUID()}", "operation_id": "op_1", "task_id": "task_1",` +
  ` "task_type": "create_media_buy", "status": "working", "timestamp": "2026-04-18T10:00:00Z",` +
  ` "result": { "percentage": 10, "note": "caf\\u00e9 déjà" } }`

/** POSTs a signed webhook `body` to `url`. */
export async function postWebhook(key: AdcpJwk, url: string, body = webhookBody()): Promise<Response> {
  const message = await signWebhook(
    { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
    { key },
  )
  return fetch(url, { method: 'POST', headers: message.headers, body })
}

/** POSTs a buyer-signed request (profile 3.2) to `url`; `tamper` changes the body after signing. */
export async function postSignedRequest(
  key: AdcpJwk,
  url: string,
  payload: unknown,
  tamper?: (body: string) => string,
): Promise<Response> {
  const body = JSON.stringify(payload)
  const message = await signRequest(
    { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
    { key, profile: '3.2' },
  )
  return fetch(url, { method: 'POST', headers: message.headers, body: tamper ? tamper(body) : body })
}

/** Listens on 127.0.0.1:0 and closes the server when the test ends. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
