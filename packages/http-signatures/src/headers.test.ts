import { describe, expect, it } from 'vitest'
import { fieldValue, headerRecord, isMultiValued, normalizeHeaders } from './headers.js'

describe('headers', () => {
  it('reads Headers and plain objects alike, names in any case', () => {
    const fromObject = normalizeHeaders({
      'Content-Type': 'application/json',
      'X-A': ['1', ' 2 '],
      'x-a': '3',
      skip: undefined,
    })
    expect(fieldValue(fromObject, 'content-type')).toBe('application/json')
    expect(fieldValue(fromObject, 'x-a')).toBe('1, 2, 3')
    expect(fromObject.has('skip')).toBe(false)
    const fromHeaders = normalizeHeaders(
      new Headers([
        ['X-A', '1'],
        ['x-a', '2'],
      ]),
    )
    expect(fieldValue(fromHeaders, 'x-a')).toBe('1, 2')
  })

  it('tells a multi-valued singleton field from a quoted comma', () => {
    expect(isMultiValued('application/json, text/plain')).toBe(true)
    expect(isMultiValued('multipart/form-data; boundary="a,b"')).toBe(false)
    expect(isMultiValued('text/plain; x="a\\",b"')).toBe(false)
  })

  it('copies headers into a lower-cased record', () => {
    expect(headerRecord({ 'Content-Type': 'a', Accept: ['b', 'c'] })).toEqual({
      'content-type': 'a',
      accept: 'b, c',
    })
  })
})
