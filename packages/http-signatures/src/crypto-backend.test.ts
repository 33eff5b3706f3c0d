import { describe, expect, it } from 'vitest'
import { generateSigningKey } from './keygen.js'
import { nodeCrypto, sha256 } from './crypto-backend.js'
import { signWebhook, verifyWebhook } from './webhook.js'

// The suite runs twice: on Node (project http-signatures) and in the edge-runtime VM without
// `process.getBuiltinModule` (project http-signatures-edge, see the root vitest.config.ts).
const edge = typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string'

describe(`crypto backend (${edge ? 'edge runtime: WebCrypto only' : 'Node: node:crypto fast path'})`, () => {
  it('uses node:crypto on Node and nothing but WebCrypto in the edge runtime', () => {
    if (edge) expect(nodeCrypto).toBeUndefined()
    else expect(typeof nodeCrypto?.verify).toBe('function')
  })

  it('hashes and signs and verifies a webhook on the backend it has', async () => {
    expect(Buffer.from(await sha256('abc')).toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    )
    const key = await generateSigningKey({ alg: 'ed25519', kid: 'k1' })
    const now = 1_767_225_600
    const signed = await signWebhook(
      {
        method: 'POST',
        url: 'https://buyer.example/hook',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
      { key: key.privateJwk, now },
    )
    const verified = await verifyWebhook(signed, { keys: key.jwks, now })
    expect(verified.keyid).toBe('k1')
  })
})
