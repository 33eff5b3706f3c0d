import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  isValidNonce,
  MAX_NONCE_LENGTH,
  readAnySignatureInput,
  readCanonicalSignatureInput,
  readSignatureInput,
  readSignatureValue,
  readUsualSignatureInput,
} from './signature-input.js'

const VALID =
  'sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");created=1776520800;expires=1776521100;nonce="KXYnfEfJ0PBRZXQyVXfVQA";keyid="test-ed25519-webhook-2026";alg="ed25519";tag="adcp/webhook-signing/v1"'

describe('readSignatureInput', () => {
  it('parses the sig1 member and keeps its serialisation byte for byte', () => {
    const input = readSignatureInput(`relay=("@method");tag="x", ${VALID}`)
    expect(input).toMatchObject({
      components: ['@method', '@target-uri', '@authority', 'content-type', 'content-digest'],
      params: { created: 1776520800, expires: 1776521100, nonce: 'KXYnfEfJ0PBRZXQyVXfVQA', alg: 'ed25519' },
      signatureParams: VALID.slice('sig1='.length),
    })
  })

  it.each([
    ['not a dictionary', 'sig1=this-is-not-valid-structured-fields'],
    ['no sig1', 'sig2=("@method");created=1'],
    ['sig1 twice', `${VALID}, sig1=("@method")`],
    [
      'an unquoted string parameter',
      VALID.replace('keyid="test-ed25519-webhook-2026"', 'keyid=test-ed25519-webhook-2026'),
    ],
    ['a quoted integer parameter', VALID.replace('created=1776520800', 'created="1776520800"')],
    ['a decimal', VALID.replace('created=1776520800', 'created=1776520800.5')],
    ['a repeated tag', `${VALID};tag="adcp/webhook-signing/v1"`],
    ['a repeated tag, escaped', `${VALID.replace('sig1=', 'sig1=')};tag="a\\"b"`],
    ['a repeated component', 'sig1=("@method" "@method");created=1'],
    ['a component with parameters', 'sig1=("content-digest";sf);created=1'],
    ['an unsupported derived component', 'sig1=("@query");created=1'],
    ['a component that is not a string', 'sig1=(method);created=1'],
    ['an item instead of an inner list', 'sig1="@method";created=1'],
    ['a trailing comma', `${VALID},`],
  ])('rejects %s', (_name, header) => {
    expect(typeof readSignatureInput(header)).toBe('string')
  })

  it('takes the fast path only where the general parser agrees', () => {
    const component = fc.constantFrom(
      '"@method"',
      '"@target-uri"',
      '"@authority"',
      '"content-type"',
      '"x-a.b_c"',
      '"@query"',
      '"Bad"',
    )
    const name = fc.constantFrom(
      'created',
      'expires',
      'nonce',
      'keyid',
      'alg',
      'tag',
      'x',
      'k1',
      'constructor',
      '__proto__',
    )
    const value = fc.oneof(
      { weight: 4, arbitrary: fc.nat({ max: 2 ** 40 }).map(String) },
      {
        weight: 6,
        arbitrary: fc
          .string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '/', '-', '=', ';', ','), maxLength: 6 })
          .map((text) => `"${text}"`),
      },
      {
        weight: 1,
        arbitrary: fc
          .string({ unit: fc.constantFrom('a', '"', '\\'), maxLength: 4 })
          .map((text) => `"${text}"`),
      },
      { weight: 1, arbitrary: fc.constantFrom('tok', '?1', ':AAEC:', '1.5', '-3', '0123') },
    )
    const header = fc
      .tuple(
        fc.constantFrom('sig1=', 'sig1=', 'sig1=', 'sig1= ', 'sig2='),
        fc.array(component, { maxLength: 5 }),
        fc.array(fc.tuple(name, value), { maxLength: 6 }),
        fc.constantFrom('', '', '', ', sig2=("@method")', ',', ' '),
      )
      .map(
        ([label, items, params, tail]) =>
          `${label}(${items.join(' ')})${params.map(([key, text]) => `;${key}=${text}`).join('')}${tail}`,
      )
    let fast = 0
    fc.assert(
      fc.property(header, (text) => {
        const canonical = readCanonicalSignatureInput(text)
        if (canonical === undefined) return
        fast += 1
        const general = readAnySignatureInput(text)
        if (typeof canonical === 'string') expect(typeof general).toBe('string')
        else expect(general).toEqual(canonical)
      }),
      { numRuns: 3000 },
    )
    expect(fast).toBeGreaterThan(100)
  })
})

describe('readUsualSignatureInput', () => {
  it('accepts the usual shape and agrees with the canonical path on everything it accepts', () => {
    expect(readUsualSignatureInput(VALID)).toEqual(readCanonicalSignatureInput(VALID))
    const component = fc.constantFrom(
      '"@method"',
      '"@target-uri"',
      '"@authority"',
      '"content-type"',
      '"content-digest"',
      '"x-a.b_c"',
      '"@query"',
      '"a@b"',
      '"@methodx"',
      '"Bad"',
      '""',
    )
    const name = fc.constantFrom('created', 'expires', 'nonce', 'keyid', 'alg', 'tag', 'createdx', 'x')
    const value = fc.oneof(
      { weight: 3, arbitrary: fc.nat({ max: 2 ** 40 }).map(String) },
      {
        weight: 3,
        arbitrary: fc
          .string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '/', '-', '=', ';', ','), maxLength: 6 })
          .map((text) => `"${text}"`),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom('"a\\"b"', '"\\"', 'tok', '1.5', '-3', '1234567890123456', ''),
      },
    )
    const header = fc
      .tuple(
        fc.constantFrom('sig1=', 'sig1=', 'sig1=', 'sig1= ', 'sig2='),
        fc.array(component, { maxLength: 5 }),
        fc.array(fc.tuple(name, value), { maxLength: 7 }),
        fc.constantFrom('', '', '', '', ', sig2=("@method")', ','),
      )
      .map(
        ([label, items, params, tail]) =>
          `${label}(${items.join(' ')})${params.map(([key, text]) => `;${key}=${text}`).join('')}${tail}`,
      )
    let usual = 0
    let refused = 0
    fc.assert(
      fc.property(header, (text) => {
        const result = readUsualSignatureInput(text)
        const canonical = readCanonicalSignatureInput(text)
        if (result === undefined) {
          if (typeof canonical === 'string') refused += 1
          return
        }
        usual += 1
        expect(result).toEqual(canonical)
        expect(readSignatureInput(text)).toEqual(result)
      }),
      { numRuns: 4000 },
    )
    expect(usual).toBeGreaterThan(40)
    expect(refused).toBeGreaterThan(20)
  })
})

describe('readSignatureValue', () => {
  const token = 'nqTKCpjlqf1OqZPuJyPeiF7HJ01G8KmPNSzzmad0PAJv7OUVKthI7ks_j4G-6x1H4mBpXDIISgX_iZQiYvG7Dg'
  it('decodes unpadded base64url for base64url and refuses any other alphabet or padding', () => {
    expect(readSignatureValue(`sig1=:${token}:`, 'base64url')).toEqual(
      new Uint8Array(Buffer.from(token, 'base64url')),
    )
    expect(typeof readSignatureValue('sig1=:A+B-:', 'base64url')).toBe('string')
    expect(typeof readSignatureValue('sig1=:AAAA==:', 'base64url')).toBe('string')
    expect(typeof readSignatureValue('sig1=:+/8=:', 'base64url')).toBe('string')
  })

  it('decodes standard base64 for sf-binary and refuses base64url characters', () => {
    expect(readSignatureValue('sig1=:+/8=:', 'sf-binary')).toEqual(new Uint8Array([251, 255]))
    expect(readSignatureValue('sig1=:+/8:', 'sf-binary')).toEqual(new Uint8Array([251, 255]))
    expect(typeof readSignatureValue('sig1=:-_8:', 'sf-binary')).toBe('string')
    expect(typeof readSignatureValue('sig1=:+/8==:', 'sf-binary')).toBe('string')
  })

  it('reads sig1 among other labels, and refuses a repeated or parameterised sig1', () => {
    expect(readSignatureValue('relay=:AAAA:, sig1=:AAEC:', 'base64url')).toEqual(new Uint8Array([0, 1, 2]))
    expect(typeof readSignatureValue('sig1=:AAEC:, sig1=:AAEC:', 'base64url')).toBe('string')
    expect(typeof readSignatureValue('sig1=:AAEC:;x=1', 'base64url')).toBe('string')
    expect(typeof readSignatureValue('sig1="AAEC"', 'base64url')).toBe('string')
    expect(typeof readSignatureValue('sig1=:AAEC', 'base64url')).toBe('string')
  })
})

describe('isValidNonce', () => {
  it.each([
    ['KXYnfEfJ0PBRZXQyVXfVQA', true],
    ['REPLAYEDwebhook16byteA', true],
    ['KXYnfEfJ0PBRZXQyVXfVQA==', false],
    ['KXYnfEfJ0PBRZXQyVXfVQ', false],
    ['KXYnfEfJ0PBRZXQyVXf+QA', false],
    ['A'.repeat(128), true],
    ['A'.repeat(131), false],
    ['A'.repeat(8192), false],
  ])('%s → %s', (nonce, valid) => expect(isValidNonce(nonce)).toBe(valid))

  it('caps the length at MAX_NONCE_LENGTH (128 characters, 96 bytes)', () => {
    expect(MAX_NONCE_LENGTH).toBe(128)
    expect(isValidNonce('A'.repeat(MAX_NONCE_LENGTH))).toBe(true)
    expect(isValidNonce('A'.repeat(MAX_NONCE_LENGTH + 2))).toBe(false)
  })
})
