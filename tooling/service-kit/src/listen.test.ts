import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { DEFAULT_HOST, describeListening, listen } from './index.js'

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
