import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPlainJsonBytes, MAX_INLINE_KEYS } from './json-bytes.js'
import { findDuplicateKeys } from './json-duplicates.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** The full step 14 check the fast path stands in for: 'plain' only for UTF-8, well-formed, no repeated key. */
function fullCheck(bytes: Uint8Array): 'plain' | 'not utf-8' | 'malformed' | 'duplicates' {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return 'not utf-8'
  }
  const report = findDuplicateKeys(text)
  if (!report.wellFormed) return 'malformed'
  return report.duplicates.length > 0 ? 'duplicates' : 'plain'
}

// JSON texts whose objects may repeat keys; names and strings reach outside ASCII, values nest.
const name = fc.constantFrom('a', 'b', 'ab', 'é', '日本', '😀', 'a b', 'package_id')
const json: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
      fc.constantFrom('true', 'false', 'null', '""', '"\\ud800"', '"\\u00e9\\n\\"/"', '-0', '1E+2', '0.5e-3'),
    ),
    fc.string({ unit: 'binary' }).map((text) => JSON.stringify(text)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(name, tie('value')), { maxLength: 5 })
      .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)} : ${value}`).join(' ,')}}`),
  ),
})).value

/** Bytes that break UTF-8 or JSON in a place or another. */
const damage = fc.constantFrom(
  [],
  [0x2c],
  [0x7d],
  [0x5d],
  [0x22],
  [0x5c],
  [0x30],
  [0x2d],
  [0x2e],
  [0x65],
  [0x20],
  [0x01],
  [0x80],
  [0xc0, 0xaf],
  [0xc3],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xef, 0xbb, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xff],
)

describe('isPlainJsonBytes agrees with the full step 14 check', () => {
  it('answers true only where the full check finds plain UTF-8 JSON, and on every such text without escaped names', () => {
    fc.assert(
      fc.property(json, fc.constantFrom('', ' ', '\n\t\r '), (text, space) => {
        const bytes = encoder.encode(`${space}${text}${space}`)
        const full = fullCheck(bytes)
        expect(isPlainJsonBytes(bytes)).toBe(full === 'plain')
      }),
      { numRuns: 3000 },
    )
  })

  it('never answers true for damaged bytes the full check refuses', () => {
    fc.assert(
      fc.property(json, fc.nat(), damage, fc.boolean(), (text, at, inserted, replace) => {
        const bytes = encoder.encode(text)
        const index = at % (bytes.length + 1)
        const damaged = new Uint8Array([
          ...bytes.subarray(0, index),
          ...inserted,
          ...bytes.subarray(replace ? index + 1 : index),
        ])
        if (isPlainJsonBytes(damaged)) expect(fullCheck(damaged)).toBe('plain')
      }),
      { numRuns: 5000 },
    )
  })

  it('validates UTF-8 inside strings exactly as the fatal decoder does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (inside) => {
        const bytes = new Uint8Array([0x5b, 0x22, ...inside, 0x22, 0x5d])
        expect(isPlainJsonBytes(bytes)).toBe(fullCheck(bytes) === 'plain')
      }),
      { numRuns: 20000 },
    )
  })

  it.each([
    ['{"a":1,"a":2}', false],
    ['{"\\u0061":1}', false],
    ['\ufeff{}', false],
    ['{"a":{"b":1},"c":{"b":2}}', true],
    ['[{"a":1},{"a":2}]', true],
    ['{"a":"\\ud800"}', true],
    ['01', false],
    ['1.', false],
    ['-', false],
    ['', false],
    [' ', false],
  ])('%s', (text, plain) => {
    const bytes = encoder.encode(text)
    expect(isPlainJsonBytes(bytes)).toBe(plain)
    if (plain) expect(fullCheck(bytes)).toBe('plain')
  })

  it('leaves large objects and escaped names to the full check, which still accepts them', () => {
    const names = Array.from({ length: MAX_INLINE_KEYS + 1 }, (_, index) => `"k${index}":${index}`)
    const large = encoder.encode(`{${names.join(',')}}`)
    expect(isPlainJsonBytes(large)).toBe(false)
    expect(fullCheck(large)).toBe('plain')
    expect(isPlainJsonBytes(encoder.encode(`{${names.slice(0, MAX_INLINE_KEYS).join(',')}}`))).toBe(true)
  })

  it('survives nesting deeper than the call stack', () => {
    expect(isPlainJsonBytes(encoder.encode('['.repeat(200_000) + ']'.repeat(200_000)))).toBe(true)
    expect(isPlainJsonBytes(encoder.encode('{"a":'.repeat(100_000)))).toBe(false)
  })
})
