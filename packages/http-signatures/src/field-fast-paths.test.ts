import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeBase64, decodeBase64Either, decodeBase64Url } from './base64.js'
import { bytesEqual, sha256, sha256MatchesNow } from './crypto-backend.js'
import { readSha256Digest } from './content-digest.js'
import { hasControlCharacter } from './headers.js'
import { isValidNonce, readSignatureValue, type SignatureEncoding } from './signature-input.js'
import { parseStructuredDictionary } from './structured-fields.js'

// The decoders and field readers as they were before the in-place fast paths: every answer (bytes, undefined
// or reason) must stay the same.
const URL_SAFE = /^[A-Za-z0-9_-]*$/
const STANDARD = /^[A-Za-z0-9+/]*$/

function referenceUnpadded(text: string, alphabet: 'url' | 'standard'): Uint8Array | undefined {
  if (text.length % 4 === 1 || !(alphabet === 'url' ? URL_SAFE : STANDARD).test(text)) return undefined
  const bytes = Buffer.from(text, alphabet === 'url' ? 'base64url' : 'base64')
  return new Uint8Array(bytes.subarray(0, Math.floor((text.length * 3) / 4)))
}

function referenceStripPadding(text: string): string | undefined {
  const first = text.indexOf('=')
  if (first === -1) return text
  const padding = text.length - first
  if (padding > 2 || text.length % 4 !== 0 || !/^=+$/.test(text.slice(first))) return undefined
  return text.slice(0, first)
}

const reference = {
  url: (text: string) => referenceUnpadded(text, 'url'),
  standard: (text: string) => {
    const unpadded = referenceStripPadding(text)
    return unpadded === undefined ? undefined : referenceUnpadded(unpadded, 'standard')
  },
  either: (text: string) => {
    const unpadded = referenceStripPadding(text)
    if (unpadded === undefined) return undefined
    const standard = /[+/]/.test(unpadded)
    if (standard && /[-_]/.test(unpadded)) return undefined
    return referenceUnpadded(unpadded, standard ? 'standard' : 'url')
  },
}

function referenceSignatureValue(header: string, encoding: SignatureEncoding): Uint8Array | string {
  let text: string
  const fast = /^sig1=:([A-Za-z0-9+/=_-]*):$/.exec(header)
  if (fast) {
    text = fast[1]!
  } else {
    const parsed = parseStructuredDictionary(header)
    if (!parsed) return 'Signature is not a structured-field dictionary'
    const members = parsed.members.filter((member) => member.key === 'sig1')
    if (members.length !== 1)
      return members.length === 0 ? 'Signature has no sig1 label' : 'Signature declares sig1 twice'
    const item = parsed.dictionary.get('sig1')!
    if (!(item[0] instanceof ArrayBuffer) || item[1].size > 0 || members[0]!.binaries.length !== 1) {
      return 'sig1 in Signature is not a byte sequence'
    }
    text = members[0]!.binaries[0]!
  }
  const bytes = encoding === 'base64url' ? reference.url(text) : reference.standard(text)
  return (
    bytes ??
    `sig1 in Signature is not ${encoding === 'base64url' ? 'unpadded base64url' : 'RFC 8941 standard base64'}`
  )
}

function referenceSha256Digest(value: string): Uint8Array | null | undefined {
  const lone = /^sha-256=:([A-Za-z0-9+/=_-]*):$/.exec(value)
  if (lone) return reference.either(lone[1]!)
  const parsed = parseStructuredDictionary(value)
  if (!parsed) return undefined
  let found: Uint8Array | null = null
  for (const member of parsed.members) {
    if (member.key !== 'sha-256') continue
    if (found !== null) return undefined
    const item = parsed.dictionary.get('sha-256')
    if (!item || !(item[0] instanceof ArrayBuffer) || member.binaries.length !== 1) return undefined
    const decoded = reference.either(member.binaries[0]!)
    if (decoded === undefined) return undefined
    found = decoded
  }
  return found
}

// Text near base64: both alphabets, padding in and out of place, and characters of neither.
const base64ish = fc.string({
  unit: fc.constantFrom(...'AQgw09az+/-_=', ':', ' ', 'é', ',', ';', '"'),
  maxLength: 48,
})
const bytes = fc.uint8Array({ maxLength: 40 })
const encoded = fc.oneof(
  base64ish,
  bytes.map((value) => Buffer.from(value).toString('base64')),
  bytes.map((value) => Buffer.from(value).toString('base64url')),
)

describe('base64 decoders over a range', () => {
  it('answer as before, whole or bounded inside a longer string', () => {
    fc.assert(
      fc.property(
        encoded,
        fc.string({ maxLength: 4 }),
        fc.string({ maxLength: 4 }),
        (text, before, after) => {
          const padded = `${before}${text}${after}`
          const start = before.length
          const end = start + text.length
          expect(decodeBase64Url(text)).toEqual(reference.url(text))
          expect(decodeBase64(text)).toEqual(reference.standard(text))
          expect(decodeBase64Either(text)).toEqual(reference.either(text))
          expect(decodeBase64Url(padded, start, end)).toEqual(reference.url(text))
          expect(decodeBase64(padded, start, end)).toEqual(reference.standard(text))
          expect(decodeBase64Either(padded, start, end)).toEqual(reference.either(text))
        },
      ),
      { numRuns: 5000 },
    )
  })
})

describe('Signature and Content-Digest read in place', () => {
  const signature = fc.oneof(
    encoded.map((text) => `sig1=:${text}:`),
    fc
      .tuple(encoded, fc.constantFrom('', ';x=1', ', sig1=:AA:', ', relay=:AA:', ':', ' '))
      .map(([text, tail]) => `sig1=:${text}:${tail}`),
    fc
      .tuple(fc.constantFrom('relay=:AAAA:, ', ' ', 'sig1=', 'sig2=:'), encoded)
      .map(([head, text]) => `${head}sig1=:${text}:`),
  )

  it('readSignatureValue answers as the regex and dictionary paths did, reason strings included', () => {
    fc.assert(
      fc.property(
        signature,
        fc.constantFrom<SignatureEncoding>('base64url', 'sf-binary'),
        (header, encoding) => {
          expect(readSignatureValue(header, encoding)).toEqual(referenceSignatureValue(header, encoding))
        },
      ),
      { numRuns: 5000 },
    )
  })

  it('readSha256Digest answers as the regex and dictionary paths did', () => {
    const digest = fc.oneof(
      encoded.map((text) => `sha-256=:${text}:`),
      fc
        .tuple(encoded, fc.constantFrom('', ', sha-512=:AA:', ', sha-256=:AA:', ';x=1', ' '))
        .map(([text, tail]) => `sha-256=:${text}:${tail}`),
      encoded.map((text) => `sha-512=:AAAA:, sha-256=:${text}:`),
    )
    fc.assert(
      fc.property(digest, (value) => {
        expect(readSha256Digest(value)).toEqual(referenceSha256Digest(value))
      }),
      { numRuns: 5000 },
    )
  })
})

describe('nonce and control-character checks without a regex', () => {
  it('isValidNonce answers as the length and alphabet regex did', () => {
    const nonce = fc.string({ unit: fc.constantFrom(...'Aa0_-+/=. é'), maxLength: 140 })
    fc.assert(
      fc.property(nonce, (text) => {
        const before =
          text.length >= 22 && text.length <= 128 && text.length % 4 !== 1 && /^[A-Za-z0-9_-]+$/.test(text)
        expect(isValidNonce(text)).toBe(before)
      }),
      { numRuns: 5000 },
    )
  })

  it('hasControlCharacter answers as the control-character regex did', () => {
    // eslint-disable-next-line no-control-regex
    const control = /[\u0000-\u0008\u000a-\u001f\u007f]/
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.integer({ min: 0, max: 0xa0 }).map((code) => String.fromCharCode(code)),
            fc.constantFrom('a', '\t', 'é'),
          ),
          maxLength: 12,
        }),
        (text) => {
          expect(hasControlCharacter(text)).toBe(control.test(text))
        },
      ),
      { numRuns: 5000 },
    )
  })
})

describe('the Content-Digest hash compared as node:crypto returns it', () => {
  it('sha256MatchesNow agrees with comparing the sha256 bytes (undefined without node:crypto)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 40 })),
        fc.nat(40),
        fc.constantFrom('same', 'flipped', 'shorter', 'longer'),
        async (data, at, change) => {
          const digest = await sha256(data)
          const expected =
            change === 'same'
              ? digest
              : change === 'shorter'
                ? digest.subarray(0, 31)
                : change === 'longer'
                  ? new Uint8Array([...digest, 0])
                  : digest.map((byte, index) => (index === at % 32 ? byte ^ 1 : byte))
          const now = sha256MatchesNow(expected, data)
          if (now !== undefined) expect(now).toBe(bytesEqual(expected, digest))
          expect(now === undefined || now === (change === 'same')).toBe(true)
        },
      ),
      { numRuns: 500 },
    )
  })
})
