import fc from 'fast-check'
import { visit } from 'jsonc-parser'
import { describe, expect, it } from 'vitest'
import { findDuplicateKeys } from './json-duplicates.js'

/** The reference: jsonc-parser's visitor in strict mode, as findDuplicateKeys was first written. */
function reference(text: string): { wellFormed: boolean; duplicates: string[] } {
  const stack: Set<string>[] = []
  const duplicates: string[] = []
  let wellFormed = true
  visit(
    text,
    {
      onObjectBegin: () => void stack.push(new Set()),
      onObjectEnd: () => void stack.pop(),
      onObjectProperty: (name) => {
        const keys = stack[stack.length - 1]
        if (!keys) return
        if (keys.has(name)) duplicates.push(name)
        else keys.add(name)
      },
      onError: () => void (wellFormed = false),
      onComment: () => void (wellFormed = false),
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  )
  return { wellFormed, duplicates }
}

const parses = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

// JSON texts with repeated keys: objects are built from key/value pairs that may repeat, keys escaped at random.
const key = fc.constantFrom('a', 'b', 'ab', 'é', '\u0000', '"', 'a\\u0062')
const json: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
      fc.constantFrom('true', 'false', 'null', '""', '"\\ud800"', '-0', '1E+2'),
    ),
    fc.string().map((text) => JSON.stringify(text)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(key, fc.boolean(), tie('value')), { maxLength: 4 })
      .map(
        (members) =>
          `{${members.map(([name, escape, value]) => `${escape && name === 'a' ? '"\\u0061"' : JSON.stringify(name).replace('\\\\u0062', '\\u0062')} : ${value}`).join(' ,')}}`,
      ),
  ),
})).value

describe('findDuplicateKeys against jsonc-parser and JSON.parse', () => {
  it('agrees on well-formed JSON, duplicates included', () => {
    fc.assert(
      fc.property(json, fc.constantFrom('', ' ', '\n\t\r '), (text, space) => {
        const padded = `${space}${text}${space}`
        expect(parses(padded)).toBe(true)
        expect(findDuplicateKeys(padded)).toEqual(reference(padded))
      }),
      { numRuns: 2000 },
    )
  })

  it('is well-formed exactly when JSON.parse accepts, on damaged JSON', () => {
    const damaged = fc
      .tuple(
        json,
        fc.nat(),
        fc.constantFrom('', ',', '}', ']', '"', '\\', '0', '-', '.', 'e', ' ', '\u0001', '\ufeff', '/*', 'x'),
      )
      .map(([text, at, insert]) => {
        const index = at % (text.length + 1)
        return text.slice(0, index) + insert + text.slice(index + (at % 2))
      })
    fc.assert(
      fc.property(damaged, (text) => {
        const report = findDuplicateKeys(text)
        expect(report.wellFormed).toBe(parses(text))
        if (report.wellFormed) expect(report).toEqual(reference(text))
      }),
      { numRuns: 5000 },
    )
  })

  it('finds repeats in objects with many members', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 10, maxLength: 80 }), (names) => {
        const text = `{${names.map((name, index) => `"k${name}":${index}`).join(',')}}`
        expect(findDuplicateKeys(text)).toEqual(reference(text))
      }),
    )
  })

  it('survives nesting deeper than the call stack', () => {
    expect(findDuplicateKeys('['.repeat(200_000) + ']'.repeat(200_000))).toEqual({
      wellFormed: true,
      duplicates: [],
    })
    expect(findDuplicateKeys('{"a":'.repeat(100_000)).wellFormed).toBe(false)
  })
})
