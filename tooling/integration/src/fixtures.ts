/** Shared pieces of the integration tests: a seller key, signed deliveries, envelopes. */
import { generateSigningKey, signWebhook, type AdcpJwk, type Jwks } from '@adwire/http-signatures'

export const WEBHOOK_URL = 'https://buyer.example.com/webhooks/seller'

export interface SellerKey {
  readonly privateJwk: AdcpJwk
  readonly jwks: Jwks
}

export const sellerKey = (): Promise<SellerKey> =>
  generateSigningKey({ alg: 'ed25519', kid: `seller-${crypto.randomUUID()}` })

export const envelope = (overrides: Record<string, unknown> = {}) => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  operation_id: 'op_1',
  task_id: `task_${crypto.randomUUID()}`,
  task_type: 'create_media_buy',
  status: 'completed',
  timestamp: '2026-04-18T10:00:00Z',
  result: { media_buy_id: 'mb_1' },
  ...overrides,
})

/** One delivery attempt: the same body every time, a fresh signature and nonce. */
export async function delivery(
  key: SellerKey,
  payload: unknown,
  now = Math.floor(Date.now() / 1000),
): Promise<Request> {
  const body = JSON.stringify(payload)
  const signed = await signWebhook(
    { method: 'POST', url: WEBHOOK_URL, headers: { 'content-type': 'application/json' }, body },
    { key: key.privateJwk, now },
  )
  return new Request(signed.url, {
    method: 'POST',
    headers: new Headers(signed.headers as Record<string, string>),
    body,
  })
}
