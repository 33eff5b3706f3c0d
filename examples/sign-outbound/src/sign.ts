/**
 * Signs outbound AdCP messages with @adwire/http-signatures alone (RFC 9421, the AdCP profiles), from a plain
 * Node script: a webhook as a seller sends it (WEBHOOK_URL) and a request as a buyer sends it (REQUEST_URL).
 * Keys live in KEYS_DIR: created on the first run, with their public half in public-jwks.json (publish it at
 * your jwks_uri, or give it to the receiver). Each send is signed anew: fresh nonce, `created` now.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { generateSigningKey, signRequest, signWebhook, type AdcpJwk } from '@adwire/http-signatures'

const keysDir = process.env.KEYS_DIR ?? 'keys'

/** The private JWK for one purpose, made (with the public JWKS beside it) when missing. */
async function keyFor(use: 'webhook-signing' | 'request-signing'): Promise<AdcpJwk> {
  const file = path.join(keysDir, `${use}.private.json`)
  if (!existsSync(file)) {
    mkdirSync(keysDir, { recursive: true })
    const kid = `${use}-${new Date().toISOString().slice(0, 10)}`
    const { privateJwk } = await generateSigningKey({ alg: 'ed25519', kid, adcpUse: use })
    writeFileSync(file, JSON.stringify(privateJwk, null, 2), { mode: 0o600 })
  }
  return JSON.parse(readFileSync(file, 'utf8')) as AdcpJwk
}

const webhookKey = await keyFor('webhook-signing')
const requestKey = await keyFor('request-signing')
const publicHalf = ({ d: _d, ...jwk }: AdcpJwk & { d?: string }) => ({ ...jwk, key_ops: ['verify'] })
writeFileSync(
  path.join(keysDir, 'public-jwks.json'),
  JSON.stringify({ keys: [publicHalf(webhookKey), publicHalf(requestKey)] }, null, 2),
)
console.log(`keys in ${keysDir}; public JWKS: ${path.join(keysDir, 'public-jwks.json')}`)

if (process.env.WEBHOOK_URL) {
  const body = JSON.stringify({
    idempotency_key: `whk_${crypto.randomUUID()}`,
    operation_id: 'op_example',
    task_id: `task_${crypto.randomUUID()}`,
    task_type: 'create_media_buy',
    status: 'working',
    timestamp: new Date().toISOString(),
    result: { percentage: 50 },
  })
  const signed = await signWebhook(
    { method: 'POST', url: process.env.WEBHOOK_URL, headers: { 'content-type': 'application/json' }, body },
    { key: webhookKey },
  )
  // Send the signed bytes unchanged; a retry signs again (same body and idempotency_key, fresh nonce).
  const response = await fetch(signed.url, {
    method: 'POST',
    headers: signed.headers,
    body,
    redirect: 'manual',
  })
  console.log(`webhook ${response.status} ${await response.text()}`)
}

if (process.env.REQUEST_URL) {
  const body = JSON.stringify({ brand: { domain: 'buyer.example' }, brief: 'video in the UK' })
  const signed = await signRequest(
    { method: 'POST', url: process.env.REQUEST_URL, headers: { 'content-type': 'application/json' }, body },
    { key: requestKey, profile: '3.2' },
  )
  const response = await fetch(signed.url, { method: 'POST', headers: signed.headers, body })
  console.log(`request ${response.status} ${await response.text()}`)
}
