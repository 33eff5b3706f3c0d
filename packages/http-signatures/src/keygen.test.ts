import { describe, expect, it } from 'vitest'
import { generateSigningKey } from './keygen.js'

describe('generateSigningKey', () => {
  it.each([
    ['ed25519', 'OKP', 'Ed25519', 'EdDSA'],
    ['es256', 'EC', 'P-256', 'ES256'],
  ] as const)('makes %s keys shaped as AdCP publishes them', async (alg, kty, crv, jwkAlg) => {
    const { privateJwk, publicJwk, jwks } = await generateSigningKey({ alg, kid: 'k1' })
    expect(publicJwk).toMatchObject({
      kid: 'k1',
      kty,
      crv,
      alg: jwkAlg,
      use: 'sig',
      key_ops: ['verify'],
      adcp_use: 'request-signing',
    })
    expect(publicJwk).not.toHaveProperty('d')
    expect(privateJwk).toMatchObject({ kid: 'k1', key_ops: ['sign'], d: expect.any(String) })
    expect(jwks).toEqual({ keys: [publicJwk] })
    // The private half signs what the public half verifies.
    const params = alg === 'ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', namedCurve: 'P-256' }
    const sign = { ...params, hash: 'SHA-256' }
    const strip = ({
      adcp_use: _u,
      use: _s,
      alg: _a,
      kid: _k,
      key_ops: _o,
      ...jwk
    }: Record<string, unknown>) => jwk as import('node:crypto').webcrypto.JsonWebKey
    const privateKey = await crypto.subtle.importKey('jwk', strip(privateJwk), params, false, ['sign'])
    const publicKey = await crypto.subtle.importKey('jwk', strip(publicJwk), params, false, ['verify'])
    const data = new TextEncoder().encode('hello')
    expect(
      await crypto.subtle.verify(sign, publicKey, await crypto.subtle.sign(sign, privateKey, data), data),
    ).toBe(true)
  })

  it('refuses bad ids and algorithms', async () => {
    await expect(generateSigningKey({ alg: 'ed25519', kid: 'has "quote"' })).rejects.toMatchObject({
      code: 'key_source_invalid',
    })
    await expect(generateSigningKey({ alg: 'rsa' as never, kid: 'k' })).rejects.toMatchObject({
      code: 'key_source_invalid',
    })
  })
})
