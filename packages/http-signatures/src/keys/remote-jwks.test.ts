import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import { remoteJwksResolver, type RemoteJwksResolverOptions } from './remote-jwks.js'
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

let server: TestServer
let published: { keys: unknown[] }
let clock: ReturnType<typeof testClock>
const path = '/.well-known/jwks.json'

beforeEach(async () => {
  published = { keys: [fakeKey('k1')] }
  clock = testClock()
  server = await startServer({ [path]: dynamic(() => published) })
})
afterEach(() => server.close())

const resolver = (options: Partial<RemoteJwksResolverOptions> = {}) =>
  remoteJwksResolver({
    url: `${server.origin}${path}`,
    fetch: testFetch(),
    now: clock.now,
    signer: 'https://seller.example/mcp',
    ...options,
  })
const webhook = () => ({ profile: 'webhook' as const, now: clock.now() })
const request = () => ({ profile: 'request' as const, now: clock.now() })

describe('remoteJwksResolver', () => {
  it('resolves a kid and reports the signer', async () => {
    const found = await resolver().resolve('k1', webhook())
    expect(found).toEqual({ jwk: fakeKey('k1'), signer: 'https://seller.example/mcp' })
  })

  it('caches the set for cacheSeconds', async () => {
    const keys = resolver({ cacheSeconds: 300 })
    await keys.resolve('k1', webhook())
    clock.advance(299)
    await keys.resolve('k1', webhook())
    expect(server.hits(path)).toBe(1)
    clock.advance(1)
    await keys.resolve('k1', webhook())
    expect(server.hits(path)).toBe(2)
  })

  it('refetches once on an unknown kid, then not within the cooldown', async () => {
    const keys = resolver()
    await keys.resolve('k1', webhook())
    published = { keys: [fakeKey('k1'), fakeKey('k2')] }
    expect(await keys.resolve('k2', webhook())).toBeDefined() // first refetch: immediate
    expect(server.hits(path)).toBe(2)
    clock.advance(10)
    expect(await keys.resolve('unknown', webhook())).toBeUndefined()
    expect(server.hits(path)).toBe(2) // k2's refetch was 10 s ago: no other within the cooldown
  })

  it('never refetches on a miss within 30 s of the previous refetch', async () => {
    const keys = resolver()
    await keys.resolve('k1', webhook()) // initial load, not a refetch
    expect(await keys.resolve('nope-1', webhook())).toBeUndefined() // refetch #1 (not delayed)
    expect(server.hits(path)).toBe(2)
    clock.advance(29)
    expect(await keys.resolve('nope-2', webhook())).toBeUndefined() // within cooldown: no fetch
    expect(server.hits(path)).toBe(2)
    clock.advance(1)
    expect(await keys.resolve('nope-3', webhook())).toBeUndefined() // cooldown over: refetch #2
    expect(server.hits(path)).toBe(3)
  })

  it('does not refetch for a miss answered by the load it just made', async () => {
    expect(await resolver().resolve('nope', webhook())).toBeUndefined()
    expect(server.hits(path)).toBe(1)
  })

  it('shares one fetch among concurrent misses', async () => {
    server.route(path, (_request, response) => {
      setTimeout(() => response.writeHead(200).end(JSON.stringify(published)), 50)
    })
    const keys = resolver()
    const cold = await Promise.all(['k1', 'a', 'b', 'c'].map((kid) => keys.resolve(kid, webhook())))
    expect(cold.map(Boolean)).toEqual([true, false, false, false])
    expect(server.hits(path)).toBe(1)
    published = { keys: [fakeKey('k1'), fakeKey('new')] }
    const misses = await Promise.all(['new', 'new', 'new', 'x'].map((kid) => keys.resolve(kid, webhook())))
    expect(misses.map(Boolean)).toEqual([true, true, true, false])
    expect(server.hits(path)).toBe(2)
  })

  it('fails with jwks_unavailable (request) or key_source_unavailable (webhook) when nothing is cached', async () => {
    server.route(path, json({ error: 'down' }, {}, 503))
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_jwks_unavailable',
    )
    const error = await failure(resolver().resolve('k1', webhook()))
    expect(error.code).toBe('key_source_unavailable')
    expect(error.step).toBe(7)
    expect(error.message).not.toContain('down')
  })

  it('calls an SSRF refusal or a redirect jwks_untrusted', async () => {
    const strict = resolver({ fetch: testFetch({ allowLoopback: false }) })
    expect((await failure(strict.resolve('k1', request()))).code).toBe('request_signature_jwks_untrusted')
    server.route(path, (_request, response) =>
      response.writeHead(301, { location: 'https://evil.example/' }).end(),
    )
    expect((await failure(resolver().resolve('k1', request()))).code).toBe('request_signature_jwks_untrusted')
    expect((await failure(resolver().resolve('k1', webhook()))).code).toBe('key_source_unavailable')
  })

  it.each([
    ['repeated member names', '{"keys":[],"keys":[]}'],
    ['a repeated kid', JSON.stringify({ keys: [fakeKey('k1'), fakeKey('k1')] })],
    ['not JSON', 'keys'],
    ['no keys array', '{"key":[]}'],
  ])('refuses a JWKS with %s', async (_name, body) => {
    server.route(path, json(body))
    expect((await failure(resolver().resolve('k1', request()))).code).toBe(
      'request_signature_jwks_unavailable',
    )
  })

  it('refuses a JWKS larger than maxBytes', async () => {
    published = { keys: Array.from({ length: 50 }, (_, index) => fakeKey(`k${index}`)) }
    expect((await failure(resolver({ maxBytes: 1024 }).resolve('k1', request()))).code).toBe(
      'request_signature_jwks_untrusted',
    )
  })

  it('negatively caches a failure, then recovers', async () => {
    server.route(path, json({}, {}, 500))
    const keys = resolver()
    await failure(keys.resolve('k1', webhook()))
    clock.advance(10)
    await failure(keys.resolve('k1', webhook()))
    expect(server.hits(path)).toBe(1)
    server.route(
      path,
      dynamic(() => published),
    )
    clock.advance(20)
    expect(await keys.resolve('k1', webhook())).toBeDefined()
    expect(server.hits(path)).toBe(2)
  })

  it('serves an expired set while the refresh fails, but throws on a miss then', async () => {
    const keys = resolver({ cacheSeconds: 60, staleIfErrorSeconds: 300 })
    await keys.resolve('k1', webhook())
    server.route(path, json({}, {}, 500))
    clock.advance(61)
    expect(await keys.resolve('k1', webhook())).toBeDefined()
    expect((await failure(keys.resolve('k9', request()))).code).toBe('request_signature_jwks_unavailable')
    clock.advance(300)
    expect((await failure(keys.resolve('k1', request()))).code).toBe('request_signature_jwks_unavailable')
  })

  it('rethrows a failed refetch for misses within its cooldown', async () => {
    const keys = resolver()
    await keys.resolve('k1', webhook())
    server.route(path, json({}, {}, 500))
    expect((await failure(keys.resolve('k2', request()))).code).toBe('request_signature_jwks_unavailable')
    clock.advance(5)
    expect((await failure(keys.resolve('k3', request()))).code).toBe('request_signature_jwks_unavailable')
    expect(await keys.resolve('k1', webhook())).toBeDefined()
  })

  it('refuses a cache longer than the revocation poll ceiling', () => {
    expect(() => resolver({ cacheSeconds: 3600 })).toThrow(/cacheSeconds/)
    expect(() => remoteJwksResolver({ url: 'not a url' })).toThrow(SignatureError)
  })
})
