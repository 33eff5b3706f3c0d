import { describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import { assertBrandOrigin, registrableDomain } from './brand-origin.js'

describe('registrableDomain', () => {
  it.each([
    ['https://agent.ads.example.co.uk/mcp', 'example.co.uk'],
    ['https://Agent.Seller.EXAMPLE/mcp', 'seller.example'],
    ['https://alice.github.io/brand.json', 'alice.github.io'], // PSL private section
    ['https://127.0.0.1:8443/', '127.0.0.1'],
    ['https://[2001:db8::1]/', '2001:db8::1'],
    ['http://localhost:3000/', 'localhost'],
  ])('%s → %s', (url, expected) => {
    expect(registrableDomain(url)).toBe(expected)
  })
})

describe('assertBrandOrigin', () => {
  const agent = 'https://ads.seller.example/mcp'

  it('binds URLs on one eTLD+1', () => {
    expect(assertBrandOrigin(agent, 'https://seller.example/.well-known/brand.json')).toEqual({
      agentSite: 'seller.example',
      brandSite: 'seller.example',
      via: 'same-site',
    })
  })

  it('does not bind sibling sites under a private suffix', () => {
    expect(() =>
      assertBrandOrigin('https://alice.github.io/mcp', 'https://mallory.github.io/brand.json'),
    ).toThrow(SignatureError)
  })

  it('binds through an active authorized operator, and only an active one', () => {
    const brandJsonUrl = 'https://holdco.example/.well-known/brand.json'
    const now = Date.parse('2026-04-18T14:00:00Z') / 1000
    const operators = (entry: object) => ({
      authorizedOperators: [{ domain: 'other.example', brands: ['*'] }, entry],
      now,
    })
    expect(
      assertBrandOrigin(agent, brandJsonUrl, operators({ domain: 'seller.example', brands: ['*'] })).via,
    ).toBe('authorized-operator')
    const expired = operators({
      domain: 'seller.example',
      brands: ['*'],
      valid_until: '2026-01-01T00:00:00Z',
    })
    const future = operators({ domain: 'seller.example', brands: ['*'], valid_from: '2027-01-01T00:00:00Z' })
    const garbled = operators({ domain: 'seller.example', brands: ['*'], valid_until: 'soon' })
    for (const options of [expired, future, garbled, {}]) {
      try {
        assertBrandOrigin(agent, brandJsonUrl, options)
        expect.unreachable()
      } catch (error) {
        expect((error as SignatureError).code).toBe('request_signature_brand_origin_mismatch')
      }
    }
  })
})
