import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { DEFAULT_HOST, DEFAULT_HTTP_LIMITS, describeListening, listen, type Listener } from './index.js'

describe('listen', () => {
  it('binds 127.0.0.1 when no host is named, and says so', async () => {
    const listener = await listen({ port: 0, fetch: () => new Response('hi') })
    try {
      expect(DEFAULT_HOST).toBe('127.0.0.1')
      expect(listener.address).toBe('127.0.0.1')
      expect(listener.boundUrl).toBe(`http://127.0.0.1:${listener.port}`)
      expect(describeListening(listener)).toBe(`http://127.0.0.1:${listener.port}`)
      expect(await (await fetch(listener.url)).text()).toBe('hi')
    } finally {
      await listener.close()
    }
  })

  it('binds every interface with 0.0.0.0 and logs that address, with the loopback URL beside it', async () => {
    const listener = await listen({ port: 0, host: '0.0.0.0', fetch: () => new Response('hi') })
    try {
      expect(listener.address).toBe('0.0.0.0')
      expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`)
      expect(describeListening(listener)).toBe(
        `http://0.0.0.0:${listener.port} (every interface; this machine: http://127.0.0.1:${listener.port})`,
      )
    } finally {
      await listener.close()
    }
  })

  it('offers each request to `intercept` first, the rest to `fetch`, with the limits kept', async () => {
    const listener = await listen({
      port: 0,
      fetch: () => new Response('from fetch'),
      intercept: (request, response) => {
        if (request.url !== '/fast') return false
        response.writeHead(200, { 'content-type': 'text/plain' }).end('from intercept')
        return true
      },
      limits: { keepAliveTimeoutMs: 1_234, maxConnections: 9 },
    })
    try {
      expect(await (await fetch(`${listener.url}/fast`)).text()).toBe('from intercept')
      expect(await (await fetch(`${listener.url}/other`)).text()).toBe('from fetch')
      expect(listener.server.keepAliveTimeout).toBe(1_234)
      expect(listener.server.maxConnections).toBe(9)
    } finally {
      await listener.close()
    }
  })

  it('answers `starting` until a handler is set', async () => {
    const listener = await listen({
      port: 0,
      starting: () => Response.json({ error: 'starting' }, { status: 503 }),
    })
    try {
      const early = await fetch(listener.url)
      expect(early.status).toBe(503)
      expect(await early.json()).toEqual({ error: 'starting' })
      listener.handle(() => new Response('ready'))
      expect(await (await fetch(listener.url)).text()).toBe('ready')
    } finally {
      await listener.close()
    }
  })

  it('rejects when the port is taken', async () => {
    const first = await listen({ port: 0 })
    try {
      await expect(listen({ port: first.port })).rejects.toThrow(/EADDRINUSE/)
    } finally {
      await first.close()
    }
  })

  it('lets an in-flight request finish on close, and cuts it after the grace period', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const listener = await listen({
      port: 0,
      fetch: async () => {
        await gate
        return new Response('late')
      },
    })
    const answer = fetch(listener.url).then((response) => response.text())
    await new Promise((resolve) => setTimeout(resolve, 50))
    const closed = listener.close(5_000)
    expect(listener.close()).toBe(closed)
    release()
    expect(await answer).toBe('late')
    await closed

    const stuck = await listen({ port: 0, fetch: () => new Promise<Response>(() => {}) })
    const cut = new Promise<string>((resolve) => {
      const outgoing = httpRequest(stuck.url, () => resolve('answered'))
      outgoing.on('error', (error) => resolve(error.message))
      outgoing.end()
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = Date.now()
    await stuck.close(100)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await cut).toMatch(/socket hang up|ECONNRESET/)
  })
})

/** A raw TCP client: what it wrote is up to the test; `closed` resolves with everything the server sent. */
async function rawClient(
  listener: Listener,
): Promise<{ socket: Socket; received: () => string; closed: Promise<string> }> {
  const socket = connect(listener.port, '127.0.0.1')
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (text += chunk))
  socket.on('error', () => {})
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(text)))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  return { socket, received: () => text, closed }
}

const GET = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10))
}

const connections = (listener: Listener) =>
  new Promise<number>((resolve, reject) =>
    listener.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  )

describe('listen: HTTP limits', () => {
  it('has documented defaults: headers 10 s, request 30 s, keep-alive 5 s, 768 sockets (128 a client), 1 MiB bodies, JSON depth 64', async () => {
    expect(DEFAULT_HTTP_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 768,
      maxConnectionsPerClient: 128,
      maxBodyBytes: 1_048_576,
      maxJsonDepth: 64,
    })
    const listener = await listen({ port: 0, limits: { maxConnections: 50 } })
    try {
      expect(listener.server.headersTimeout).toBe(10_000)
      expect(listener.server.requestTimeout).toBe(30_000)
      expect(listener.server.keepAliveTimeout).toBe(5_000)
      expect(listener.server.maxConnections).toBe(50)
    } finally {
      await listener.close()
    }
    await expect(
      listen({ port: 0, limits: { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 } }),
    ).rejects.toThrow(/headersTimeoutMs exceeds requestTimeoutMs/)
    await expect(listen({ port: 0, limits: { maxConnections: 0 } })).rejects.toThrow(/maxConnections/)
  })

  it('answers 408 and closes a socket whose body stalls, while other requests are served', async () => {
    const listener = await listen({
      port: 0,
      limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 },
      fetch: async (request) => new Response(`read ${(await request.arrayBuffer()).byteLength}`),
    })
    try {
      const stalled = await rawClient(listener)
      // Promises 1,000 bytes, sends 10, then nothing.
      stalled.socket.write(
        'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n0123456789',
      )
      const headersOnly = await rawClient(listener)
      headersOnly.socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n')
      expect(await (await fetch(listener.url, { method: 'POST', body: 'abc' })).text()).toBe('read 3')
      expect(await stalled.closed).toMatch(/^HTTP\/1\.1 408 /)
      expect(await headersOnly.closed).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      await listener.close()
    }
  })

  it('closes an idle keep-alive socket after the keep-alive timeout', async () => {
    const listener = await listen({
      port: 0,
      limits: { keepAliveTimeoutMs: 100 },
      fetch: () => new Response('hi'),
    })
    try {
      const client = await rawClient(listener)
      client.socket.write(GET)
      const answer = await client.closed
      expect(answer).toMatch(/^HTTP\/1\.1 200 /)
      expect(answer).toMatch(/keep-alive/i)
      expect(answer.endsWith('hi')).toBe(true)
    } finally {
      await listener.close()
    }
  })

  it('closes connections beyond maxConnections as they arrive; the open ones keep working', async () => {
    const listener = await listen({ port: 0, limits: { maxConnections: 2 }, fetch: () => new Response('hi') })
    try {
      const first = await rawClient(listener)
      const second = await rawClient(listener)
      first.socket.write(GET)
      await until(() => first.received().endsWith('hi'))
      const third = await rawClient(listener)
      third.socket.write(GET)
      // Accepted by the kernel, then closed by the server without an answer.
      expect(await third.closed).toBe('')
      second.socket.write(GET)
      await until(() => second.received().endsWith('hi'))
      expect(second.received()).toMatch(/^HTTP\/1\.1 200 /)
      // A freed slot is usable again.
      first.socket.destroy()
      await first.closed
      await until(async () => (await connections(listener)) === 1)
      expect(await (await fetch(listener.url)).text()).toBe('hi')
      second.socket.destroy()
    } finally {
      await listener.close()
    }
  })
})
