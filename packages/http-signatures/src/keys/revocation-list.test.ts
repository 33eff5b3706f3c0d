import type { webcrypto } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AdcpJwk } from '../types.js'
import { revocationList, staticRevocationList, type RevocationListOptions } from './revocation-list.js'
import {
  dynamic,
  failure,
  json,
  startServer,
  testClock,
  testFetch,
  type TestServer,
} from '../testing/test-server.js'

const T0 = Date.parse('2026-04-18T14:00:00Z') / 1000
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()
const list = (updated: number, interval: number, revoked: string[] = ['gone']) => ({
  version: 1,
  issuer: 'https://seller.example',
  updated: iso(updated),
  next_update: iso(updated + interval),
  revoked_kids: revoked,
  revoked_jtis: [],
})

describe('staticRevocationList', () => {
  const source = staticRevocationList({
    revoked_kids: ['gone'],
    updated: iso(T0),
    next_update: iso(T0 + 900),
  })

  it('answers revoked, valid, and stale once next_update + 4 intervals has passed', async () => {
    expect(await source.check('gone', T0)).toBe('revoked')
    expect(await source.check('k1', T0 + 900)).toBe('valid')
    expect(await source.check('k1', T0 + 900 + 4 * 900 - 1)).toBe('valid')
    expect(await source.check('k1', T0 + 900 + 4 * 900)).toBe('stale')
    expect(await source.check('gone', T0 + 99_999)).toBe('revoked')
  })

  it('clamps the interval to 60 s .. 30 min when computing grace', async () => {
    const short = staticRevocationList({ revoked_kids: [], updated: T0, next_update: T0 + 5 })
    expect(await short.check('k', T0 + 5 + 239)).toBe('valid')
    expect(await short.check('k', T0 + 5 + 240)).toBe('stale')
    const long = staticRevocationList({ revoked_kids: [], updated: T0, next_update: T0 + 7200 })
    expect(await long.check('k', T0 + 7200 + 7200 - 1)).toBe('valid')
    expect(await long.check('k', T0 + 7200 + 7200)).toBe('stale')
  })

  it('refuses a malformed list', () => {
    expect(() => staticRevocationList({ revoked_kids: [], updated: T0, next_update: T0 })).toThrow(/after/)
    expect(() => staticRevocationList({ revoked_kids: [], updated: 'noon', next_update: T0 })).toThrow(
      /RFC 3339/,
    )
  })
})

describe('revocationList', () => {
  const PATH = '/revocations.json'
  let server: TestServer
  let clock: ReturnType<typeof testClock>
  let published: unknown
  beforeEach(async () => {
    clock = testClock(T0)
    published = list(T0, 600)
    server = await startServer({ [PATH]: dynamic(() => published) })
  })
  afterEach(() => server.close())
  const source = (options: Partial<RevocationListOptions> = {}) =>
    revocationList({
      url: `${server.origin}${PATH}`,
      fetch: testFetch(),
      now: clock.now,
      issuer: 'https://seller.example',
      ...options,
    })

  it('polls at next_update, not before', async () => {
    const revocation = source()
    expect(await revocation.check('gone', clock.now())).toBe('revoked')
    expect(await revocation.check('k1', clock.now())).toBe('valid')
    clock.advance(599)
    await revocation.check('k1', clock.now())
    expect(server.hits(PATH)).toBe(1)
    published = list(T0 + 600, 600, [])
    clock.advance(1)
    expect(await revocation.check('gone', clock.now())).toBe('valid')
    expect(server.hits(PATH)).toBe(2)
  })

  it('floors the poll interval at 60 s and caps it at 30 min', async () => {
    published = list(T0, 10)
    const fast = source()
    await fast.check('k', clock.now())
    clock.advance(59)
    await fast.check('k', clock.now())
    expect(server.hits(PATH)).toBe(1)
    clock.advance(1)
    await fast.check('k', clock.now())
    expect(server.hits(PATH)).toBe(2)

    clock.set(T0)
    published = list(T0, 7200)
    const slow = source()
    await slow.check('k', clock.now())
    clock.advance(1800)
    await slow.check('k', clock.now())
    expect(server.hits(PATH)).toBe(4)
  })

  it('keeps the last list through failures within grace, then fails closed', async () => {
    const revocation = source()
    await revocation.check('k1', clock.now())
    server.route(PATH, json({}, {}, 503))
    clock.advance(600 + 4 * 600 - 1)
    expect(await revocation.check('k1', clock.now())).toBe('valid')
    expect(await revocation.check('gone', clock.now())).toBe('revoked')
    clock.advance(1)
    expect(await revocation.check('k1', clock.now())).toBe('stale')
    server.route(
      PATH,
      dynamic(() => list(clock.now(), 600)),
    )
    clock.advance(60)
    expect(await revocation.check('k1', clock.now())).toBe('valid')
  })

  it('is stale when no list was ever read', async () => {
    server.route(PATH, json('not json'))
    const revocation = source()
    expect(await revocation.check('k1', clock.now())).toBe('stale')
    expect((await failure(revocation.refresh())).code).toBe('key_source_invalid')
  })

  it('refuses a list older than the one in use, and another issuer', async () => {
    const revocation = source()
    await revocation.refresh()
    published = list(T0 - 600, 600)
    expect((await failure(revocation.refresh())).message).toMatch(/back in time/)
    published = { ...list(T0 + 600, 600), issuer: 'https://mallory.example' }
    expect((await failure(revocation.refresh())).message).toMatch(/issuer/)
    expect(revocation.current()?.updated).toBe(T0)
  })

  it('shares one fetch among concurrent checks', async () => {
    server.route(PATH, (_request, response) => {
      setTimeout(() => response.writeHead(200).end(JSON.stringify(published)), 50)
    })
    const revocation = source()
    const answers = await Promise.all(['gone', 'k1', 'k2'].map((kid) => revocation.check(kid, clock.now())))
    expect(answers).toEqual(['revoked', 'valid', 'valid'])
    expect(server.hits(PATH)).toBe(1)
  })

  describe('signed (flattened JWS) lists', () => {
    let publicJwk: AdcpJwk
    let sign: (payload: unknown, header?: object) => Promise<unknown>
    beforeEach(async () => {
      const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
        'sign',
        'verify',
      ])) as webcrypto.CryptoKeyPair
      const exported = await crypto.subtle.exportKey('jwk', pair.publicKey)
      publicJwk = {
        kty: 'OKP',
        crv: 'Ed25519',
        x: exported.x!,
        kid: 'rev-1',
        alg: 'EdDSA',
        use: 'sig',
        key_ops: ['verify'],
      }
      const b64 = (value: string | Uint8Array) => Buffer.from(value).toString('base64url')
      sign = async (payload, header = {}) => {
        const protectedHeader = b64(
          JSON.stringify({ alg: 'EdDSA', kid: 'rev-1', typ: 'adcp-gov-revocation+jws', ...header }),
        )
        const encoded = b64(JSON.stringify(payload))
        const signature = await crypto.subtle.sign(
          { name: 'Ed25519' },
          pair.privateKey,
          new TextEncoder().encode(`${protectedHeader}.${encoded}`),
        )
        return { protected: protectedHeader, payload: encoded, signature: b64(new Uint8Array(signature)) }
      }
    })

    it('accepts a list that verifies under the configured keys', async () => {
      published = await sign(list(T0, 600))
      const revocation = source({
        signingKeys: { keys: [publicJwk] },
        expectedTyp: 'adcp-gov-revocation+jws',
      })
      expect(await revocation.check('gone', clock.now())).toBe('revoked')
    })

    it('refuses a tampered, unsigned, mistyped or unknown-key list', async () => {
      const signed = (await sign(list(T0, 600))) as Record<string, string>
      const tampered = {
        ...signed,
        payload: Buffer.from(JSON.stringify(list(T0, 600, []))).toString('base64url'),
      }
      const cases = [
        tampered,
        list(T0, 600),
        await sign(list(T0, 600), { typ: 'JWT' }),
        await sign(list(T0, 600), { kid: 'other' }),
        await sign(list(T0, 600), { crit: ['b64'] }),
      ]
      for (const document of cases) {
        published = document
        const revocation = source({
          signingKeys: { keys: [publicJwk] },
          expectedTyp: 'adcp-gov-revocation+jws',
        })
        expect((await failure(revocation.refresh())).code).toBe('key_source_invalid')
        expect(await revocation.check('k1', clock.now())).toBe('stale')
      }
    })

    it('verifies ES256 lists too', async () => {
      const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
        'sign',
        'verify',
      ])) as webcrypto.CryptoKeyPair
      const { x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey)
      const b64 = (value: string | Uint8Array) => Buffer.from(value).toString('base64url')
      const protectedHeader = b64(JSON.stringify({ alg: 'ES256', kid: 'rev-ec' }))
      const payload = b64(JSON.stringify(list(T0, 600)))
      const signature = await crypto.subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        pair.privateKey,
        new TextEncoder().encode(`${protectedHeader}.${payload}`),
      )
      published = { protected: protectedHeader, payload, signature: b64(new Uint8Array(signature)) }
      const ecJwk: AdcpJwk = { kty: 'EC', crv: 'P-256', x: x!, y: y!, kid: 'rev-ec', alg: 'ES256' }
      expect(
        await source({ signingKeys: async (kid) => (kid === 'rev-ec' ? ecJwk : undefined) }).check(
          'gone',
          clock.now(),
        ),
      ).toBe('revoked')
    })

    it('reads the payload of a signed list when no keys are configured (TLS-only trust)', async () => {
      published = await sign(list(T0, 600))
      expect(await source().check('gone', clock.now())).toBe('revoked')
    })
  })
})
