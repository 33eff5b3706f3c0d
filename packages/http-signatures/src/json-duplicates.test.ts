import { describe, expect, it } from 'vitest'
import { findDuplicateKeys, sanitizeKeyNamesForLog } from './json-duplicates.js'

describe('findDuplicateKeys', () => {
  it.each([
    ['{"a":1,"b":2}', true, []],
    ['{"a":1,"a":2}', true, ['a']],
    ['{"x":{"a":1,"a":1},"a":0}', true, ['a']],
    ['[{"a":1},{"a":2}]', true, []],
    ['{"a":{"b":1},"c":{"b":2},"c":3}', true, ['c']],
    ['{"\\u0061":1,"a":2}', true, ['a']],
    ['{"a":1,}', false, []],
    ['{"a":1} // note', false, []],
    ['{"a":', false, []],
    ['', false, []],
  ] as const)('%s', (text, wellFormed, duplicates) => {
    expect(findDuplicateKeys(text)).toEqual({ wellFormed, duplicates })
  })
})

describe('sanitizeKeyNamesForLog', () => {
  it('cuts at unprintable characters, caps at 32 bytes and four names', () => {
    expect(sanitizeKeyNamesForLog(['ok', 'bad\u202eevil', 'x'.repeat(40), 'é'.repeat(20), 'e', 'f'])).toEqual(
      ['ok', 'bad<sanitized:3>', 'x'.repeat(32), 'é'.repeat(16), '<...2 more>'],
    )
  })
})
