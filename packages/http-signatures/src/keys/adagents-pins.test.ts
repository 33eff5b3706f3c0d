import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { adagentsPinnedResolver, type AdagentsPinnedResolverOptions } from './adagents-pins.js'
import { jwksResolver } from './static-jwks.js'
import {
  dynamic,
  failure,
  fakeKey,
  json,
  startServer,
  testClock,
  testFetch,
  type TestServer,
} from '../testing/test-server.js'

const AGENT = 'https://ads.seller.example/mcp'
const PATH = '/.well-known/adagents.json'
const pin = (kid: string, extra: object = {}) => ({
  kid,
  kty: 'OKP',
  crv: 'Ed25519',
  x: fakeKey(kid).x,
  alg: 'EdDSA',
  ...extra,
})
const entry = (signingKeys?: object[], url = AGENT) => ({
  url,
  authorized_for: 'Display inventory',
  authorization_type: 'property_tags',
  property_tags: ['all'],
  ...(signingKeys ? { signing_keys: signingKeys } : {}),
})

let server: TestServer
let clock: ReturnType<typeof testClock>
let adagents: unknown
let headers: Record<string, string>
// The agent's own JWKS: has k1 (pinned) and rogue (not pinned).
const agentJwks = jwksResolver({ keys: [fakeKey('k1'), fakeKey('rogue')] }, { signer: AGENT })

beforeEach(async () => {
  clock = testClock()
  headers = {}
  adagents = { authorized_agents: [entry([pin('k1')])] }
  server = await startServer()
  server.route(PATH, (request, response) => dynamic(() => adagents, headers)(request, response))
})
afterEach(() => server.close())

const resolver = (options: Partial<AdagentsPinnedResolverOptions> = {}) =>
  adagentsPinnedResolver({
    adagentsUrl: `${server.origin}${PATH}`,
    agentUrl: AGENT,
    fetch: testFetch(),
    now: clock.now,
    fallback: agentJwks,
    ...options,
  })
const webhook = (created?: number) => ({
  profile: 'webhook' as const,
  now: clock.now(),
  ...(created === undefined ? {} : { created }),
})

describe('adagentsPinnedResolver', () => {
  it('answers pinned keys with the JWK members verifiers expect filled in', async () => {
    expect(await resolver().resolve('k1', webhook())).toEqual({
      jwk: { ...pin('k1'), use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing' },
      signer: AGENT,
    })
  })

  it('keeps members the pin states, so a wrong purpose still fails step 8', async () => {
    adagents = { authorized_agents: [entry([pin('k1', { use: 'enc' })])] }
    expect((await resolver().resolve('k1', webhook()))?.jwk.use).toBe('enc')
  })

  it('is authoritative: a kid in the agent JWKS but not pinned is unknown, after one forced refresh', async () => {
    const keys = resolver()
    await keys.resolve('k1', webhook())
    expect(await keys.resolve('rogue', webhook())).toBeUndefined()
    expect(server.hits(PATH)).toBe(2)
    expect(server.requests.at(-1)!.headers['cache-control']).toBe('no-cache')
  })

  it('picks up a newly pinned key on the forced refresh', async () => {
    const keys = resolver()
    await keys.resolve('k1', webhook())
    adagents = { authorized_agents: [entry([pin('k1'), pin('k2')])] }
    expect(await keys.resolve('k2', webhook())).toBeDefined()
  })

  it('forces at most one refresh per cooldown', async () => {
    const keys = resolver({ refreshCooldownSeconds: 30 })
    await keys.resolve('k1', webhook())
    await keys.resolve('a', webhook())
    clock.advance(29)
    await keys.resolve('b', webhook())
    expect(server.hits(PATH)).toBe(2)
    clock.advance(1)
    await keys.resolve('c', webhook())
    expect(server.hits(PATH)).toBe(3)
  })

  it('honours revoked_at against the signature created time (or now)', async () => {
    const revokedAt = '2026-04-18T14:00:00Z'
    const epoch = Date.parse(revokedAt) / 1000
    adagents = { authorized_agents: [entry([pin('k1', { revoked_at: revokedAt })])] }
    const keys = resolver()
    expect(await keys.resolve('k1', webhook(epoch - 1))).toBeDefined()
    const error = await failure(keys.resolve('k1', webhook(epoch)))
    expect(error.code).toBe('webhook_signature_key_revoked')
    clock.set(epoch + 10)
    expect((await failure(keys.resolve('k1', webhook()))).code).toBe('webhook_signature_key_revoked')
    adagents = { authorized_agents: [entry([pin('k1', { revoked_at: 'yesterday' })])] }
    expect((await failure(resolver().resolve('k1', webhook(epoch - 1000)))).code).toBe(
      'webhook_signature_key_revoked',
    )
  })

  it('defers to the fallback when the agent has no pins, and for the request profile', async () => {
    adagents = { authorized_agents: [entry(undefined), entry([pin('other')], 'https://other.example/mcp')] }
    expect(await resolver().resolve('rogue', webhook())).toEqual({ jwk: fakeKey('rogue'), signer: AGENT })
    expect(await resolver({ fallback: undefined }).resolve('rogue', webhook())).toBeUndefined()
    adagents = { authorized_agents: [entry([pin('k1')])] }
    expect(await resolver().resolve('rogue', { profile: 'request', now: clock.now() })).toBeDefined()
  })

  it('unions the pins of every entry for the agent and refuses conflicting ones', async () => {
    adagents = { authorized_agents: [entry([pin('k1')]), entry([pin('k2'), pin('k1')])] }
    expect(await resolver().resolve('k2', webhook())).toBeDefined()
    adagents = { authorized_agents: [entry([pin('k1')]), entry([pin('k1', { alg: 'ES256' })])] }
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('key_source_unavailable')
  })

  it('caches per Cache-Control max-age (floored), 1 h by default', async () => {
    headers = { 'cache-control': 'public, max-age=120' }
    const keys = resolver()
    await keys.resolve('k1', webhook())
    clock.advance(119)
    await keys.resolve('k1', webhook())
    expect(server.hits(PATH)).toBe(1)
    clock.advance(1)
    await keys.resolve('k1', webhook())
    expect(server.hits(PATH)).toBe(2)

    headers = {}
    const defaults = resolver()
    await defaults.resolve('k1', webhook())
    clock.advance(3599)
    await defaults.resolve('k1', webhook())
    expect(server.hits(PATH)).toBe(3)

    headers = { 'cache-control': 'no-store' }
    const floored = resolver()
    await floored.resolve('k1', webhook())
    clock.advance(29)
    await floored.resolve('k1', webhook())
    expect(server.hits(PATH)).toBe(4)
  })

  it('fails closed when adagents.json cannot be read, even with a fallback', async () => {
    server.route(PATH, json({}, {}, 500))
    expect((await failure(resolver().resolve('rogue', webhook()))).code).toBe('key_source_unavailable')
  })

  it('follows one authoritative_location hop', async () => {
    server.route('/network/adagents.json', json({ authorized_agents: [entry([pin('k1')])] }))
    adagents = { authoritative_location: `${server.origin}/network/adagents.json` }
    expect(await resolver().resolve('k1', webhook())).toBeDefined()
    server.route('/network/adagents.json', json({ authoritative_location: `${server.origin}/again.json` }))
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('key_source_unavailable')
  })

  it('accepts a fetchAdagents callback, told when a refresh is forced', async () => {
    const fetchAdagents = vi.fn(async () => ({ authorized_agents: [entry([pin('k1')])] }))
    const keys = adagentsPinnedResolver({ fetchAdagents, agentUrl: AGENT, now: clock.now })
    expect(await keys.resolve('k1', webhook())).toBeDefined()
    expect(await keys.resolve('nope', webhook())).toBeUndefined()
    expect(fetchAdagents.mock.calls).toEqual([[{ forced: false }], [{ forced: true }]])
    expect(() => adagentsPinnedResolver({ agentUrl: AGENT })).toThrow(/exactly one/)
  })
})
