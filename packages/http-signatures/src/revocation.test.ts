import { describe, expect, it } from 'vitest'
import { revocationSource } from './key-lookup.js'
import { staticRevocation } from './revocation.js'

describe('staticRevocation', () => {
  it('reports revoked keyids, and every other keyid stale when the list is stale', async () => {
    const fresh = staticRevocation(['old'])
    expect(await fresh.check('old', 0)).toBe('revoked')
    expect(await fresh.check('new', 0)).toBe('valid')
    const stale = staticRevocation(['old'], { stale: true })
    expect(await stale.check('old', 0)).toBe('revoked')
    expect(await stale.check('new', 0)).toBe('stale')
  })

  it('backs the plain { revokedKids } verifier option', async () => {
    const option = { revokedKids: ['old'] }
    expect(revocationSource(option)).toBe(revocationSource(option))
    expect(await revocationSource(option)!.check('old', 0)).toBe('revoked')
    expect(revocationSource(undefined)).toBeUndefined()
  })
})
