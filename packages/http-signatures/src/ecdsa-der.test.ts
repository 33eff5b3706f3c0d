/**
 * P1363 ↔ DER for P-256 signatures (ecdsa-der.ts): against node:crypto's own conversion (`dsaEncoding`) on
 * thousands of real signatures, the edge shapes (leading zero bytes, a set high bit, zero), and malformed DER.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { derToP1363, p1363ToDer } from './ecdsa-der.js'
import { signBytes, verifyBytes, verifyBytesNow } from './algorithms.js'
import { generateSigningKey } from './keygen.js'

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

describe('ECDSA P-256 signatures between P1363 and DER', () => {
  it("matches node:crypto's own conversion both ways on 2,000 signatures", () => {
    let leadingZero = 0
    let highBit = 0
    for (let index = 0; index < 2000; index += 1) {
      const data = Buffer.from(`message ${index}`)
      const der = sign('sha256', data, privateKey)
      const p1363 = derToP1363(der)
      // node:crypto's DER is minimal: the conversion gives it back byte for byte.
      expect(hex(p1363ToDer(p1363))).toBe(hex(der))
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, p1363)).toBe(true)
      expect(verify('sha256', data, publicKey, p1363ToDer(p1363))).toBe(true)
      if (p1363[0] === 0 || p1363[32] === 0) leadingZero += 1
      if (p1363[0]! & 0x80 || p1363[32]! & 0x80) highBit += 1
    }
    // Both shapes occurred (about 1 in 128 and 3 in 4 of random signatures).
    expect(leadingZero).toBeGreaterThan(0)
    expect(highBit).toBeGreaterThan(0)
  })

  it('encodes the edge values minimally', () => {
    const signature = new Uint8Array(64)
    signature[31] = 1 // r = 1
    signature[32] = 0x80 // s with its high bit set: a zero byte in front
    expect(hex(p1363ToDer(signature))).toBe(`3026020101022100${'80'.padEnd(64, '0')}`)
    // r = s = 0: one zero byte each (verification then fails: out of range).
    expect(hex(p1363ToDer(new Uint8Array(64)))).toBe('3006020100020100')
    expect(verify('sha256', Buffer.from('x'), publicKey, p1363ToDer(new Uint8Array(64)))).toBe(false)
    expect(hex(derToP1363(p1363ToDer(signature)))).toBe(hex(signature))
  })

  it('refuses what is not a 64-byte P1363 or a DER P-256 signature', () => {
    expect(() => p1363ToDer(new Uint8Array(63))).toThrow(RangeError)
    const der = sign('sha256', Buffer.from('x'), privateKey)
    expect(() => derToP1363(new Uint8Array([0x31, ...der.subarray(1)]))).toThrow(RangeError)
    expect(() => derToP1363(new Uint8Array([...der, 0]))).toThrow(RangeError)
    expect(() => derToP1363(new Uint8Array([0x30, 3, 0x02, 0x01, 0x01]))).toThrow(RangeError)
    // An INTEGER of 33 bytes without the zero sign byte is larger than the curve allows.
    const long = new Uint8Array([0x30, 38, 0x02, 33, ...new Uint8Array(33).fill(1), 0x02, 0x01, 0x01])
    expect(() => derToP1363(long)).toThrow(RangeError)
  })

  it('signs and verifies ES256 through the KeyObject, interoperable with the dsaEncoding form', async () => {
    const { privateJwk, publicJwk } = await generateSigningKey({ alg: 'es256', kid: 'der-test' })
    const data = new TextEncoder().encode('"@method": POST')
    const signature = await signBytes(privateJwk, 'ecdsa-p256-sha256', data)
    expect(signature).toHaveLength(64)
    // Inline where node:crypto is (undefined in the runtime without it: WebCrypto then).
    expect(
      verifyBytesNow(publicJwk, 'ecdsa-p256-sha256', data, signature) ??
        (await verifyBytes(publicJwk, 'ecdsa-p256-sha256', data, signature)),
    ).toBe(true)
    expect(await verifyBytes(publicJwk, 'ecdsa-p256-sha256', data, signature, { offload: true })).toBe(true)
    const { kid: _kid, alg: _alg, use: _use, key_ops: _ops, adcp_use: _purpose, ...jwk } = publicJwk
    const { createPublicKey } = await import('node:crypto')
    const key = createPublicKey({ key: jwk as Record<string, string>, format: 'jwk' })
    expect(verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true)
    // One flipped bit of s, and of r: refused inline and on the thread pool.
    for (const at of [63, 0]) {
      const tampered = Uint8Array.from(signature)
      tampered[at]! ^= 1
      expect(
        verifyBytesNow(publicJwk, 'ecdsa-p256-sha256', data, tampered) ??
          (await verifyBytes(publicJwk, 'ecdsa-p256-sha256', data, tampered)),
      ).toBe(false)
      expect(await verifyBytes(publicJwk, 'ecdsa-p256-sha256', data, tampered, { offload: true })).toBe(false)
    }
  })
})
