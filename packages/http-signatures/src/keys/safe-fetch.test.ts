import net from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { SignatureError } from '../errors.js'
import { checkAddress } from './address-policy.js'
import { createSafeFetch } from './safe-fetch.js'
import { failure, json, startServer, testFetch, type TestServer } from '../testing/test-server.js'

let server: TestServer
beforeAll(async () => {
  server = await startServer({
    '/doc': json({ ok: true }, { 'x-test': 'yes' }),
    '/redirect': (_request, response) =>
      response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end(),
    '/large-declared': (_request, response) =>
      response.writeHead(200, { 'content-length': '5000' }).end('SECRET-BODY'.padEnd(5000, 'x')),
    '/large-streamed': (_request, response) => {
      response.writeHead(200)
      for (let i = 0; i < 20; i++) response.write('SECRET-BODY'.padEnd(1000, 'x'))
      response.end()
    },
    '/slow': (_request, response) => {
      response.writeHead(200)
      response.write('{')
    },
    '/silent': () => undefined,
    '/error': json('SECRET-BODY', {}, 500),
  })
})
afterAll(() => server.close())
afterEach(() => vi.restoreAllMocks())

describe('createSafeFetch', () => {
  it('fetches a document over loopback when allowed, pinned to the validated address', async () => {
    const lookup = vi.fn(async () => [{ address: '127.0.0.1', family: 4 }])
    const connect = vi.spyOn(net.Socket.prototype, 'connect')
    const fetch = testFetch({ lookup })
    const response = await fetch(`http://keys.example.test:${server.port}/doc`)
    // The spy sees every outgoing connection (the refusal tests rely on it): this one went to the pinned IP.
    expect(connect).toHaveBeenCalledTimes(1)
    const [target] = connect.mock.calls[0]![0] as unknown as [{ host: string; port: number }]
    expect(target).toMatchObject({ host: '127.0.0.1', port: server.port })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-test')).toBe('yes')
    expect(JSON.parse(new TextDecoder().decode(response.body))).toEqual({ ok: true })
    expect(lookup).toHaveBeenCalledTimes(1)
    const seen = server.requests.at(-1)!
    expect(seen.headers.host).toBe(`keys.example.test:${server.port}`)
    expect(seen.headers['accept-encoding']).toBe('identity')
  })

  it('returns non-2xx statuses without echoing the body in errors', async () => {
    const response = await testFetch()(`${server.origin}/error`)
    expect(response.status).toBe(500)
  })

  it('refuses http unless allowHttp, and URLs with userinfo, before connecting', async () => {
    const before = server.connections()
    expect((await failure(createSafeFetch({ allowLoopback: true })(`${server.origin}/doc`))).code).toBe(
      'fetch_refused',
    )
    const withUser = `http://user:pass@127.0.0.1:${server.port}/doc`
    expect((await failure(testFetch()(withUser))).code).toBe('fetch_refused')
    expect((await failure(testFetch()('ftp://127.0.0.1/doc'))).code).toBe('fetch_refused')
    expect(server.connections()).toBe(before)
  })

  it('refuses loopback (literal and resolved) unless allowLoopback', async () => {
    const before = server.connections()
    const fetch = createSafeFetch({ allowHttp: true })
    expect((await failure(fetch(`${server.origin}/doc`))).code).toBe('fetch_refused')
    expect((await failure(fetch(`http://[::1]:${server.port}/doc`))).code).toBe('fetch_refused')
    const resolving = createSafeFetch({
      allowHttp: true,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    expect((await failure(resolving(`http://localhost.test:${server.port}/doc`))).code).toBe('fetch_refused')
    expect(server.connections()).toBe(before)
  })

  it.each([
    ['10.0.0.1'],
    ['172.16.5.4'],
    ['192.168.1.1'],
    ['169.254.169.254'],
    ['::ffff:127.0.0.1'],
    ['::ffff:10.0.0.1'],
    ['fd00:ec2::254'],
    ['fe80::1'],
    ['100.64.0.1'],
    ['0.0.0.0'],
    ['::'],
    ['224.0.0.1'],
    ['64:ff9b::a00:1'],
  ])('refuses a host resolving to %s before any connection', async (address) => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect')
    const fetch = createSafeFetch({
      allowHttp: true,
      allowLoopback: true,
      lookup: async () => [{ address, family: address.includes(':') ? 6 : 4 }],
    })
    const error = await failure(fetch('http://victim.test/latest/meta-data'))
    expect(error.code).toBe('fetch_refused')
    expect(connect).not.toHaveBeenCalled()
  })

  it('refuses when any answer is bad, and metadata addresses even under allowPrivate', async () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect')
    const mixed = createSafeFetch({
      lookup: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ],
    })
    expect((await failure(mixed('https://mixed.test/'))).code).toBe('fetch_refused')
    const privateAllowed = createSafeFetch({
      allowPrivate: true,
      lookup: async () => [{ address: 'fd00:ec2::254', family: 6 }],
    })
    expect((await failure(privateAllowed('https://imds.test/'))).code).toBe('fetch_refused')
    expect(connect).not.toHaveBeenCalled()
  })

  it('refuses redirects unless the caller asks to see them', async () => {
    const fetch = testFetch()
    const error = await failure(fetch(`${server.origin}/redirect`))
    expect(error.code).toBe('fetch_refused')
    const manual = await fetch(`${server.origin}/redirect`, { redirect: 'manual' })
    expect(manual.status).toBe(302)
    expect(manual.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere')
    expect(manual.body.length).toBe(0)
  })

  it('refuses bodies past the size cap, declared or streamed, without quoting them', async () => {
    const fetch = testFetch({ maxBytes: 1024 })
    for (const path of ['/large-declared', '/large-streamed']) {
      const error = await failure(fetch(`${server.origin}${path}`))
      expect(error.code).toBe('fetch_refused')
      expect(error.message).not.toContain('SECRET')
    }
    const perCall = await fetch(`${server.origin}/large-declared`, { maxBytes: 10_000 })
    expect(perCall.body.length).toBe(5000)
  })

  it('gives up on a slow server at the total time cap', async () => {
    const fetch = testFetch({ timeoutMs: 150 })
    const started = Date.now()
    for (const path of ['/slow', '/silent']) {
      const error = await failure(fetch(`${server.origin}${path}`))
      expect(error.code).toBe('fetch_failed')
      expect(error.message).toMatch(/timed out/)
    }
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('bounds a hanging DNS lookup by the total time cap', async () => {
    const fetch = createSafeFetch({ timeoutMs: 100, lookup: () => new Promise(() => undefined) })
    expect((await failure(fetch('https://hang.test/'))).code).toBe('fetch_failed')
  })

  it('reports lookup and connection failures as fetch_failed', async () => {
    const failing = createSafeFetch({ lookup: async () => Promise.reject(new Error('ENOTFOUND')) })
    expect((await failure(failing('https://nowhere.test/'))).code).toBe('fetch_failed')
    const empty = createSafeFetch({ lookup: async () => [] })
    expect((await failure(empty('https://nowhere.test/'))).code).toBe('fetch_failed')
    const closed = await startServer()
    const port = closed.port
    await closed.close()
    expect((await failure(testFetch()(`http://127.0.0.1:${port}/`))).code).toBe('fetch_failed')
  })
})

describe('checkAddress', () => {
  it('allows public unicast and returns the address to pin', () => {
    expect(checkAddress('93.184.215.14', {})).toEqual({ address: '93.184.215.14', family: 4 })
    expect(checkAddress('2606:4700::1', {})).toEqual({ address: '2606:4700::1', family: 6 })
    expect(checkAddress('::ffff:93.184.215.14', {})).toEqual({ address: '93.184.215.14', family: 4 })
  })

  it('allows loopback and private ranges only by policy, never mapped or metadata ones', () => {
    expect(() => checkAddress('127.0.0.1', {})).toThrow(SignatureError)
    expect(checkAddress('127.0.0.1', { allowLoopback: true }).address).toBe('127.0.0.1')
    expect(checkAddress('::1', { allowLoopback: true }).family).toBe(6)
    expect(checkAddress('10.0.0.1', { allowPrivate: true }).address).toBe('10.0.0.1')
    expect(checkAddress('fd12::1', { allowPrivate: true }).family).toBe(6)
    expect(() => checkAddress('::ffff:127.0.0.1', { allowLoopback: true })).toThrow(/IPv4-mapped/)
    expect(() => checkAddress('::ffff:10.0.0.1', { allowPrivate: true })).toThrow(SignatureError)
    expect(() => checkAddress('169.254.169.254', { allowPrivate: true, allowLoopback: true })).toThrow(
      /metadata/,
    )
    expect(() => checkAddress('100.100.100.200', { allowPrivate: true })).toThrow(/metadata/)
    expect(() => checkAddress('fe80::1%eth0', { allowPrivate: true })).toThrow(SignatureError)
    expect(() => checkAddress('not-an-ip', {})).toThrow(SignatureError)
  })
})
