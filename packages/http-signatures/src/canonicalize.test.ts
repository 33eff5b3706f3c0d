import { describe, expect, it } from 'vitest'
import {
  authorityHeaderProblem,
  canonicalAuthority,
  canonicalizeTargetUri,
  canonicalTarget,
  hasNonAsciiAuthority,
} from './canonicalize.js'
import { SignatureError } from './errors.js'
import { normalizeHeaders } from './headers.js'

describe('canonicalTarget', () => {
  it.each([
    ['https://Seller.Example/%2e%2E/a/%7e%41%3a?%7e%3a=+', 'https://seller.example/a/~A%3A?~%3A=+'],
    ['https://s.example/a/b/..', 'https://s.example/a/'],
    ['https://s.example/a/.', 'https://s.example/a/'],
    ['https://s.example/..', 'https://s.example/'],
    ['https://s.example:0443/p', 'https://s.example/p'],
    ['http://s.example:443/p', 'http://s.example:443/p'],
    ['https://s.example:/p', 'https://s.example/p'],
    ['https://faß.example/p', 'https://xn--fa-hia.example/p'],
    ['https://xn--bcher-kva.example/p', 'https://xn--bcher-kva.example/p'],
    ['https://192.0.2.1:8443/p', 'https://192.0.2.1:8443/p'],
    ['https://[2001:DB8:0::1]:443/p', 'https://[2001:db8:0::1]/p'],
    ['https://s.example/a|b^c[d]?q=[x]|y', 'https://s.example/a|b^c[d]?q=[x]|y'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalizeTargetUri(input).targetUri).toBe(expected)
  })

  it.each([
    ['a relative URL', '/adcp/create_media_buy'],
    ['a scheme other than http(s)', 'ftp://s.example/p'],
    ['an underscore in a label (STD3)', 'https://a_b.example/p'],
    ['a leading hyphen (CheckHyphens)', 'https://-ab.example/p'],
    ['"--" in positions 3 and 4 (CheckHyphens)', 'https://ab--c.example/p'],
    ['an invalid A-label', 'https://xn--a.example/p'],
    ['a numeric host that is not dotted-decimal IPv4', 'https://0x7f.1/p'],
    ['an IPv4 octet over 255', 'https://1.2.3.256/p'],
    ['a percent-escape in the host', 'https://b%C3%BCcher.example/p'],
    ['an IPvFuture literal', 'https://[v1.x]/p'],
    ['a port over 65535', 'https://s.example:65536/p'],
    ['a non-numeric port', 'https://s.example:https/p'],
    ['a space in the path', 'https://s.example/a b'],
    ['a raw non-ASCII path', 'https://s.example/é'],
    ['a backslash in the path', 'https://s.example/a\\b'],
    ['a quote in the query', 'https://s.example/p?a="b"'],
    ['a malformed escape', 'https://s.example/p%zz'],
    ['a truncated escape in the query', 'https://s.example/p?a=%4'],
  ])('rejects %s', (_name, input) => {
    expect(typeof canonicalTarget(input)).toBe('string')
  })

  it('throws the profile code', () => {
    try {
      canonicalizeTargetUri('https:///p', 'webhook')
      expect.unreachable()
    } catch (error) {
      expect(SignatureError.is(error) && error.code).toBe('webhook_target_uri_malformed')
    }
  })
})

describe('authorities', () => {
  it('canonicalises a Host value for its scheme', () => {
    expect(canonicalAuthority('Seller.Example:443', 'https')).toBe('seller.example')
    expect(canonicalAuthority('seller.example:80', 'https')).toBe('seller.example:80')
    expect(canonicalAuthority('user@seller.example', 'https')).toMatch(/^!/)
  })

  it('requires Host and :authority to agree with each other and with the target', () => {
    const target = canonicalizeTargetUri('https://seller.example/p')
    expect(authorityHeaderProblem(normalizeHeaders({ Host: 'SELLER.example:443' }), target)).toBeUndefined()
    expect(authorityHeaderProblem(normalizeHeaders({ Host: 'other.example' }), target)).toMatch(
      /not the signed/,
    )
    expect(
      authorityHeaderProblem(normalizeHeaders({ Host: ['seller.example', 'seller.example'] }), target),
    ).toMatch(/more than once/)
    expect(
      authorityHeaderProblem(normalizeHeaders({ ':authority': 'seller.example', host: 'x.example' }), target),
    ).toMatch(/differ/)
  })

  it('judges a Host value the same each time it is received, for each scheme (remembered per scheme)', () => {
    const https = canonicalizeTargetUri('https://seller.example/p')
    const http = canonicalizeTargetUri('http://seller.example:443/p')
    for (let round = 0; round < 3; round += 1) {
      expect(authorityHeaderProblem(normalizeHeaders({ Host: 'seller.example:443' }), https)).toBeUndefined()
      expect(authorityHeaderProblem(normalizeHeaders({ Host: 'seller.example:443' }), http)).toBeUndefined()
      expect(authorityHeaderProblem(normalizeHeaders({ Host: 'seller.example:80' }), https)).toBe(
        'the received authority seller.example:80 is not the signed seller.example',
      )
      expect(authorityHeaderProblem(normalizeHeaders({ Host: 'seller..example' }), https)).toBe(
        'host is malformed: host has an empty DNS label',
      )
    }
    // Past the 1,024 values remembered, the first are judged again, the same way.
    for (let index = 0; index < 1100; index += 1)
      expect(authorityHeaderProblem(normalizeHeaders({ Host: `h${index}.example` }), https)).toMatch(
        /not the signed/,
      )
    expect(authorityHeaderProblem(normalizeHeaders({ Host: 'SELLER.example:443' }), https)).toBeUndefined()
  })

  it('spots raw non-ASCII in the authority only', () => {
    expect(hasNonAsciiAuthority('https://bücher.example/p')).toBe(true)
    expect(hasNonAsciiAuthority('https://u:ü@b.example/p')).toBe(true)
    expect(hasNonAsciiAuthority('https://b.example/bücher')).toBe(false)
  })
})
