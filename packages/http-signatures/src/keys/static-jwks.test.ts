import { describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import type { Jwks } from '../types.js'
import { jwksResolver } from './static-jwks.js'
import { fakeKey } from '../testing/test-server.js'

const key = fakeKey
const context = { profile: 'webhook', now: 1_776_520_800 } as const

describe('jwksResolver', () => {
  it('resolves a kid of the set, with the signer when given', async () => {
    const keys = jwksResolver({ keys: [key('a'), key('b')] }, { signer: 'https://seller.example/mcp' })
    expect(await keys.resolve('b', context)).toEqual({ jwk: key('b'), signer: 'https://seller.example/mcp' })
    expect(await jwksResolver({ keys: [key('a')] }).resolve('a', context)).toEqual({ jwk: key('a') })
  })

  it('answers undefined for an unknown kid', async () => {
    expect(await jwksResolver({ keys: [key('a')] }).resolve('z', context)).toBeUndefined()
  })

  it('skips keys without a kid', async () => {
    const { kid: _kid, ...anonymous } = key('x')
    const keys = jwksResolver({ keys: [anonymous, key('a')] } as unknown as Jwks)
    expect(await keys.resolve('a', context)).toBeDefined()
  })

  it.each([
    ['a repeated kid', { keys: [key('a'), key('a')] }],
    ['no keys array', { keys: 'nope' }],
    ['a non-object entry', { keys: [1] }],
    ['a key without kty', { keys: [{ kid: 'a' }] }],
  ])('refuses a JWKS with %s', (_name, jwks) => {
    expect(() => jwksResolver(jwks as unknown as Jwks)).toThrow(SignatureError)
    try {
      jwksResolver(jwks as unknown as Jwks)
    } catch (error) {
      expect((error as SignatureError).code).toBe('key_source_invalid')
    }
  })
})
