/**
 * Shared helpers of the receiver tests: a seller key, a receiver on memory stores with an injected clock, and
 * deliveries signed (RFC 9421 or HMAC) at a given time, as a seller's retry would be: fresh nonce each call.
 */
import {
  generateSigningKey,
  MemoryReplayStore,
  signHmacWebhook,
  signWebhook,
  type AdcpJwk,
  type Jwks,
} from '@adwire/http-signatures'
import { beforeAll } from 'vitest'
import {
  createWebhookReceiver,
  MemoryClaimStore,
  MemoryConvergenceStore,
  type ReceivedEvent,
  type ReceiverLogEntry,
  type Registration,
  type WebhookReceiverOptions,
} from '../index.js'

export const URL_BASE = 'https://buyer.example.com/webhooks'
export const NOW = 1_776_520_800
export const HMAC_SECRET = 'hmac-secret-for-tests-0123456789abcdef'
export const SELLER = 'https://seller.example.com/mcp'

/** The seller's signing key, made once per test file. */
export function sellerKey(kid = 'seller-key-1') {
  const key = {} as { privateJwk: AdcpJwk; jwks: Jwks }
  beforeAll(async () => {
    const generated = await generateSigningKey({ alg: 'ed25519', kid })
    key.privateJwk = generated.privateJwk
    key.jwks = generated.jwks
  })
  return key
}

/** A receiver whose registrations are looked up by the last path segment; `clock.now` may be moved. */
export function receiverWith(
  registrations: readonly Registration[],
  overrides: Partial<WebhookReceiverOptions> = {},
) {
  const published: ReceivedEvent[] = []
  const logs: ReceiverLogEntry[] = []
  const clock = { now: NOW }
  const byId = new Map(registrations.map((registration) => [registration.id, registration]))
  const claims = new MemoryClaimStore()
  const convergence = new MemoryConvergenceStore()
  const receiver = createWebhookReceiver({
    registration: (request) => byId.get(new URL(request.url).pathname.split('/').pop() ?? ''),
    claims,
    convergence,
    replayStore: new MemoryReplayStore(),
    publish: async (event) => void published.push(event),
    now: () => clock.now,
    log: (entry) => void logs.push(entry),
    ...overrides,
  })
  return { receiver, published, logs, clock, claims, convergence }
}

/** A delivery to `registration` signed with RFC 9421 at `now`. */
export async function signed(
  key: { privateJwk: AdcpJwk },
  registration: string,
  payload: unknown,
  now = NOW,
): Promise<Request> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const message = await signWebhook(
    {
      method: 'POST',
      url: `${URL_BASE}/${registration}`,
      headers: { 'content-type': 'application/json' },
      body,
    },
    { key: key.privateJwk, now },
  )
  return new Request(message.url, {
    method: 'POST',
    headers: new Headers(message.headers as Record<string, string>),
    body,
  })
}

/** A delivery to `registration` signed with legacy HMAC-SHA256 at `now`. */
export async function hmacSigned(
  registration: string,
  payload: unknown,
  now = NOW,
  secret = HMAC_SECRET,
): Promise<Request> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const headers = await signHmacWebhook(body, { secret, now })
  return new Request(`${URL_BASE}/${registration}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
}

/** Status and parsed body of an answer. */
export async function answer(response: Response) {
  return {
    status: response.status,
    body: (await response.json()) as { status?: string; error?: { code: string; message: string } },
  }
}

/** An MCP-shape envelope with a fresh key and task. */
export const envelope = (overrides: Record<string, unknown> = {}) => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  operation_id: 'op_1',
  task_id: `task_${crypto.randomUUID()}`,
  task_type: 'create_media_buy',
  status: 'working',
  timestamp: '2026-04-18T10:00:00Z',
  result: { percentage: 10 },
  ...overrides,
})
