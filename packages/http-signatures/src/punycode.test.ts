import { describe, expect, it } from 'vitest'
import { canonicalizeTargetUri } from './canonicalize.js'
import { decodePunycode } from './punycode.js'

describe('decodePunycode', () => {
  it.each([
    ['bcher-kva', 'bücher'],
    ['mnchen-3ya', 'münchen'],
    ['ihqwcrb4cv8a8dqg056pqjye', '他们为什么不说中文'], // RFC 3492 §7.1 (A), Chinese (simplified)
    ['egbpdaj6bu4bxfgehfvwxn', 'ليهمابتكلموشعربي؟'], // RFC 3492 §7.1 (A), Arabic (Egyptian)
    ['-> $1.00 <--', '-> $1.00 <-'], // RFC 3492 §7.1 (S): only basic code points
  ])('decodes %s', (input, expected) => {
    expect(decodePunycode(input)).toBe(expected)
  })

  it.each([
    ['a non-basic character', 'bücher-kva'],
    ['a character that is not a digit', 'abc!'],
    ['a truncated number', 'bcher-kv9'],
    ['an overflow', '9999999999999999'],
  ])('refuses %s', (_name, input) => {
    expect(decodePunycode(input)).toBeUndefined()
  })
})

describe('A-labels in the target URI', () => {
  it('keeps a valid A-label and refuses labels that decode to nothing valid, whatever the URL parser does', () => {
    expect(canonicalizeTargetUri('https://xn--bcher-kva.example/p', 'webhook').authority).toBe(
      'xn--bcher-kva.example',
    )
    for (const host of ['xn--a.example', 'xn--.example', 'xn--abc.example', 'xn--zz-.example']) {
      expect(() => canonicalizeTargetUri(`https://${host}/p`, 'webhook'), host).toThrow()
    }
  })
})
