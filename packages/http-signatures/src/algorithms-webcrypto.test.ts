import { describe, expect, it, vi } from 'vitest'
import { privateKeys } from '../test/conformance/signing-vectors.js'

// Runs the algorithms and digests without node:crypto, as on an edge runtime: WebCrypto only.
vi.mock('./crypto-backend.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('./crypto-backend.js')>()),
  nodeCrypto: undefined,
}))

const { signBytes, verifyBytes } = await import('./algorithms.js')
const { signWebhook, verifyWebhook } = await import('./webhook.js')
const { nodeCrypto } = await import('./crypto-backend.js')

const keys = privateKeys('3.1.19', 'webhook-signing')
const data = new TextEncoder().encode('base')

describe('without node:crypto', () => {
  it('runs on WebCrypto', () => expect(nodeCrypto).toBeUndefined())

  it.each([
    ['ed25519', 'test-ed25519-webhook-2026'],
    ['ecdsa-p256-sha256', 'test-es256-webhook-2026'],
  ] as const)('signs and verifies %s', async (algorithm, kid) => {
    const { d: _d, ...publicJwk } = keys.get(kid)!
    const signature = await signBytes(keys.get(kid)!, algorithm, data)
    expect(await verifyBytes(publicJwk, algorithm, data, signature)).toBe(true)
    expect(await verifyBytes(publicJwk, algorithm, new TextEncoder().encode('other'), signature)).toBe(false)
  })

  it('signs and verifies a webhook end to end', async () => {
    const key = keys.get('test-ed25519-webhook-2026')!
    const { d: _d, ...publicJwk } = key
    const signed = await signWebhook(
      {
        method: 'POST',
        url: 'https://buyer.example.com/hook',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
      { key, now: 1776520800 },
    )
    await expect(
      verifyWebhook(signed, { keys: { keys: [{ ...publicJwk, key_ops: ['verify'] }] }, now: 1776520800 }),
    ).resolves.toBeDefined()
  })
})
