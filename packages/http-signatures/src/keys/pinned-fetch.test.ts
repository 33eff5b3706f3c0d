import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import { createPinnedFetch } from './pinned-fetch.js'
import type { LookupAddress } from './pinned-target.js'
import { failure, json, startServer, type TestServer } from '../testing/test-server.js'

let server: TestServer
beforeAll(async () => {
  server = await startServer({
    '/echo': (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () =>
        response.writeHead(201, { 'content-type': 'application/json', 'x-seen': 'yes' }).end(
          JSON.stringify({
            method: request.method,
            host: request.headers.host,
            type: request.headers['content-type'],
            body: Buffer.concat(chunks).toString(),
          }),
        ),
      )
    },
    '/empty': (_request, response) => response.writeHead(204).end(),
    '/moved': (_request, response) => response.writeHead(302, { location: '/echo' }).end(),
    '/stream': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write('data: one\n\n')
      setTimeout(() => response.end('data: two\n\n'), 50)
    },
    '/large': (_request, response) => {
      response.writeHead(200)
      for (let i = 0; i < 10; i++) response.write('x'.repeat(1000))
      response.end()
    },
    '/silent': () => undefined,
    '/ok': json({ ok: true }),
  })
})
afterAll(() => server.close())

const PUBLIC = { address: '93.184.215.14', family: 4 }
const LOOPBACK = { address: '127.0.0.1', family: 4 }

/** A DNS rebinding name: a public address to the first question, 127.0.0.1 to every later one. */
function rebindingLookup() {
  const asked: string[] = []
  const lookup = async (hostname: string): Promise<readonly LookupAddress[]> => {
    asked.push(hostname)
    return asked.length === 1 ? [PUBLIC] : [LOOPBACK]
  }
  return { lookup, asked }
}

const local = (options: Parameters<typeof createPinnedFetch>[0] = {}) =>
  createPinnedFetch({
    allowHttp: true,
    allowLoopback: true,
    lookup: async () => [LOOPBACK],
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    ...options,
  })

describe('createPinnedFetch', () => {
  it('sends any method with its body and headers and answers a web Response', async () => {
    const response = await local()(`http://agent.test:${server.port}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'get_adcp_capabilities' }),
    })
    expect(response).toBeInstanceOf(Response)
    expect(response.status).toBe(201)
    expect(response.headers.get('x-seen')).toBe('yes')
    expect(response.url).toBe(`http://agent.test:${server.port}/echo`)
    expect(await response.json()).toEqual({
      method: 'POST',
      host: `agent.test:${server.port}`,
      type: 'application/json',
      body: '{"task":"get_adcp_capabilities"}',
    })
    const empty = await local()(new Request(`${server.origin}/empty`, { method: 'DELETE' }))
    expect(empty.status).toBe(204)
    expect(empty.body).toBeNull()
  })

  it('streams the body as it arrives (server-sent events)', async () => {
    const response = await local()(`${server.origin}/stream`)
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    expect((await reader.read()).value).toBe('data: one\n\n')
    let rest = ''
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += next.value
    expect(rest).toBe('data: two\n\n')
  })

  it('connects to the address it checked: a rebinding name never reaches 127.0.0.1', async () => {
    const before = server.connections()
    const { lookup, asked } = rebindingLookup()
    const fetch = createPinnedFetch({ allowHttp: true, lookup, connectTimeoutMs: 300, timeoutMs: 2_000 })
    // First question: a public address passes the check, and the socket goes there (unreachable here).
    const first = await failure(fetch(`http://rebind.test:${server.port}/ok`, { method: 'POST', body: '{}' }))
    expect(first.code).toBe('fetch_failed')
    expect(asked).toEqual(['rebind.test'])
    // Second question: 127.0.0.1 is refused before any connection.
    const second = await failure(fetch(`http://rebind.test:${server.port}/ok`))
    expect(second.code).toBe('fetch_refused')
    expect(asked).toHaveLength(2)
    expect(server.connections()).toBe(before)
  })

  it('refuses loopback spelled as IPv4-compatible or IPv4-mapped IPv6, even when loopback is allowed', async () => {
    const before = server.connections()
    for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[::ffff:127.0.0.1]']) {
      const error = await failure(local()(`http://${host}:${server.port}/ok`))
      expect(error.code, host).toBe('fetch_refused')
    }
    expect(server.connections()).toBe(before)
  })

  it('never follows a redirect: refused, or returned without body when asked for manual', async () => {
    expect((await failure(local()(`${server.origin}/moved`))).code).toBe('fetch_refused')
    const manual = await local()(`${server.origin}/moved`, { redirect: 'manual' })
    expect(manual.status).toBe(302)
    expect(manual.headers.get('location')).toBe('/echo')
    expect(server.hits('/echo')).toBe(1)
  })

  it('honours the caller signal, the time cap and the size cap', async () => {
    const controller = new AbortController()
    const pending = local()(`${server.origin}/silent`, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('caller gave up')), 50)
    await expect(pending).rejects.toThrow('caller gave up')

    const slow = await failure(local({ timeoutMs: 150 })(`${server.origin}/silent`))
    expect(slow.code).toBe('fetch_failed')
    expect(slow.message).toMatch(/timed out/)

    const capped = await local({ maxBytes: 2_000 })(`${server.origin}/large`)
    const error = await capped.text().then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(SignatureError.is(error) && error.code).toBe('fetch_refused')
  })

  it('refuses plain http unless allowed, and userinfo, before resolving', async () => {
    const { lookup, asked } = rebindingLookup()
    const strict = createPinnedFetch({ lookup })
    expect((await failure(strict(`http://agent.test:${server.port}/ok`))).code).toBe('fetch_refused')
    expect((await failure(strict('https://user:pw@agent.test/ok'))).code).toBe('fetch_refused')
    expect(asked).toEqual([])
  })
})
