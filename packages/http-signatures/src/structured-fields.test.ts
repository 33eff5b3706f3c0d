import { describe, expect, it } from 'vitest'
import { hasRepeatedParameter, parseStructuredDictionary } from './structured-fields.js'

describe('parseStructuredDictionary', () => {
  it('keeps every member in order with its raw text, repeats included', () => {
    const parsed = parseStructuredDictionary('sig1=("a" "b,c");k="x;y" , sig2=:AA+/:, sig1=?1, flag;p=1')!
    expect(parsed.members.map(({ key, raw }) => [key, raw])).toEqual([
      ['sig1', '("a" "b,c");k="x;y"'],
      ['sig2', ':AA+/:'],
      ['sig1', '?1'],
      ['flag', ''],
    ])
    expect(parsed.members[1]!.binaries).toEqual(['AA+/'])
    expect(parsed.dictionary.get('sig1')![0]).toBe(true)
  })

  it('takes byte sequences out so any alphabet reaches the caller', () => {
    const parsed = parseStructuredDictionary('sha-256=:dJ2k_-8:, md5=:x:')!
    expect(parsed.members.map((member) => member.binaries)).toEqual([['dJ2k_-8'], ['x']])
    expect(parsed.dictionary.get('sha-256')![0]).toBeInstanceOf(ArrayBuffer)
  })

  it('does not mistake a colon inside a token or a string for a byte sequence', () => {
    const parsed = parseStructuredDictionary('a=foo:bar, b="x:y:z"')!
    expect(parsed.members.map((member) => member.binaries)).toEqual([[], []])
  })

  it.each(['', 'Sig1=1', 'a=1,', 'a="unterminated', 'a=:AAAA', 'a=(1 2', 'a=1;;b', '1a=1'])(
    'rejects %j',
    (text) => {
      if (text === '') expect(parseStructuredDictionary(text)?.members).toEqual([])
      else expect(parseStructuredDictionary(text)).toBeUndefined()
    },
  )
})

describe('hasRepeatedParameter', () => {
  it('looks at the member parameters only, outside strings', () => {
    expect(hasRepeatedParameter('("a";x "b";x);tag="t;tag=1"')).toBe(false)
    expect(hasRepeatedParameter('("a");tag="t";created=1;tag="u"')).toBe(true)
    expect(hasRepeatedParameter('("a"); tag="t";tag')).toBe(true)
  })
})
