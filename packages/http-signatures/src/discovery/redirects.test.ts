import { describe, expect, it } from 'vitest'
import { decideRedirect, MAX_DISCOVERY_REDIRECTS, type RedirectStep } from './redirects.js'

const ORIGIN = 'https://pub.example/.well-known/adagents.json'
const step = (overrides: Partial<RedirectStep>): RedirectStep => ({
  origin: ORIGIN,
  current: ORIGIN,
  status: 301,
  location: 'https://www.pub.example/.well-known/adagents.json',
  hop: 'well_known',
  followed: 0,
  ...overrides,
})

describe('decideRedirect', () => {
  it('follows a same-site https redirect, relative locations included', () => {
    expect(decideRedirect(step({}))).toEqual({ follow: 'https://www.pub.example/.well-known/adagents.json' })
    expect(decideRedirect(step({ location: '/adagents.json' }))).toEqual({
      follow: 'https://pub.example/adagents.json',
    })
  })

  it('refuses by the rules, in order', () => {
    const reason = (overrides: Partial<RedirectStep>) => {
      const decision = decideRedirect(step(overrides))
      return 'refuse' in decision ? decision.refuse : undefined
    }
    expect(reason({ hop: 'authoritative_location' })).toBe('redirect_on_authoritative_location')
    expect(reason({ location: null })).toBe('redirect_without_location')
    expect(reason({ followed: MAX_DISCOVERY_REDIRECTS })).toBe('too_many_redirects')
    expect(reason({ location: 'http://pub.example/a.json' })).toBe('scheme_downgrade')
    expect(reason({ location: 'https://other.example/a.json' })).toBe('cross_registrable_domain')
  })
})
