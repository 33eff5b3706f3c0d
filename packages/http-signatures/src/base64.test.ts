import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeBase64, decodeBase64Either, decodeBase64Url, encodeBase64, encodeBase64Url } from './base64.js'

describe('base64 codecs', () => {
  it('round-trip and match Node on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const buffer = Buffer.from(bytes)
        expect(encodeBase64(bytes)).toBe(buffer.toString('base64'))
        expect(encodeBase64Url(bytes)).toBe(buffer.toString('base64url'))
        expect(decodeBase64(encodeBase64(bytes))).toEqual(bytes)
        expect(decodeBase64Url(encodeBase64Url(bytes))).toEqual(bytes)
        expect(decodeBase64Either(encodeBase64(bytes))).toEqual(bytes)
        expect(decodeBase64Either(encodeBase64Url(bytes))).toEqual(bytes)
      }),
    )
  })

  it('decode any string of the alphabet as Node does, non-canonical trailing bits included', () => {
    const url = fc.string({
      unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
      maxLength: 90,
    })
    fc.assert(
      fc.property(url, (text) => {
        if (text.length % 4 === 1) expect(decodeBase64Url(text)).toBeUndefined()
        else expect(decodeBase64Url(text)).toEqual(new Uint8Array(Buffer.from(text, 'base64url')))
      }),
    )
  })

  it.each([
    ['base64url refuses padding', decodeBase64Url, 'AA=='],
    ['base64url refuses the standard alphabet', decodeBase64Url, 'A+/A'],
    ['base64url refuses an impossible length', decodeBase64Url, 'AAAAA'],
    ['base64 refuses the URL-safe alphabet', decodeBase64, 'A-_A'],
    ['base64 refuses padding in the middle', decodeBase64, 'AA=A'],
    ['base64 refuses three padding characters', decodeBase64, 'A==='],
    ['base64 refuses padding that does not end a quantum', decodeBase64, 'AAAAA='],
    ['either refuses mixed alphabets', decodeBase64Either, 'A+B-'],
    ['either refuses non-ASCII', decodeBase64Either, 'AAé='],
  ] as const)('%s', (_name, decode, text) => {
    expect(decode(text)).toBeUndefined()
  })
})
