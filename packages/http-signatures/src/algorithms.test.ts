import { describe, expect, it } from 'vitest'
import { privateKeys } from '../test/conformance/signing-vectors.js'
import { algorithmOfJwk, isAllowedAlgorithm, keyShapeProblem, signBytes, verifyBytes } from './algorithms.js'
import type { AdcpJwk } from './types.js'

const keys = privateKeys('3.1.19', 'request-signing')
const ed = keys.get('test-ed25519-2026')!
const es = keys.get('test-es256-2026')!
const data = new TextEncoder().encode('"@method": POST')

describe('algorithms', () => {
  it('maps JWKs to RFC 9421 names only when kty, crv and alg agree', () => {
    expect(algorithmOfJwk(ed)).toBe('ed25519')
    expect(algorithmOfJwk(es)).toBe('ecdsa-p256-sha256')
    expect(algorithmOfJwk({ ...ed, alg: undefined })).toBe('ed25519')
    expect(algorithmOfJwk({ ...es, alg: 'EdDSA' })).toBeUndefined()
    expect(algorithmOfJwk({ ...ed, crv: 'Ed448' })).toBeUndefined()
    expect(
      isAllowedAlgorithm('ed25519') &&
        isAllowedAlgorithm('ecdsa-p256-sha256') &&
        !isAllowedAlgorithm('hmac-sha256'),
    ).toBe(true)
  })

  it('checks key shape against the signature algorithm (request vector 025)', () => {
    const mismatch: AdcpJwk = { kid: 'k', kty: 'EC', crv: 'P-256', alg: 'EdDSA', x: ed.x! }
    expect(keyShapeProblem(mismatch, 'ed25519')).toMatch(/not OKP\/Ed25519/)
    expect(keyShapeProblem({ ...es, y: undefined }, 'ecdsa-p256-sha256')).toMatch(/32-byte/)
    expect(keyShapeProblem(ed, 'ed25519', true)).toBeUndefined()
  })

  it.each([
    ['ed25519', ed],
    ['ecdsa-p256-sha256', es],
  ] as const)('signs and verifies %s (ECDSA as 64-byte r‖s)', async (algorithm, jwk) => {
    const signature = await signBytes(jwk, algorithm, data)
    expect(signature).toHaveLength(64)
    const { d: _d, ...publicJwk } = jwk
    expect(await verifyBytes(publicJwk, algorithm, data, signature)).toBe(true)
    expect(await verifyBytes({ ...publicJwk }, algorithm, data, signature)).toBe(true)
    const flipped = signature.slice()
    flipped[10]! ^= 1
    expect(await verifyBytes(publicJwk, algorithm, data, flipped)).toBe(false)
    expect(await verifyBytes(publicJwk, algorithm, data, signature.slice(0, 63))).toBe(false)
  })

  it('answers false for a key that does not import', async () => {
    const offCurve: AdcpJwk = { kid: 'bad', kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) }
    expect(await verifyBytes(offCurve, 'ecdsa-p256-sha256', data, new Uint8Array(64))).toBe(false)
  })
})
