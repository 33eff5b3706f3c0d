import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outboundFetches } from './outbound.js'
import { json, localServer, type LocalServer } from './testing/receiver.js'

let server: LocalServer
beforeAll(async () => {
  server = await localServer((request, response) => {
    if (request.url === '/moved') {
      response.writeHead(302, { location: '/ok' })
      response.end()
      return
    }
    json(response, 200, { ok: true })
  })
})
afterAll(() => server.close())

const port = () => new URL(server.url).port

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error & { code?: string }) => error,
  )

/** DNS rebinding: a public address to the first question, 127.0.0.1 (this test's server) afterwards. */
function rebinding() {
  const asked: string[] = []
  return {
    asked,
    lookup: async (hostname: string) => {
      asked.push(hostname)
      return asked.length === 1
        ? [{ address: '93.184.215.14', family: 4 }]
        : [{ address: '127.0.0.1', family: 4 }]
    },
  }
}

describe('the receiver outbound fetches', () => {
  it('connect to the address the check saw: a rebinding name never reaches 127.0.0.1', async () => {
    for (const which of ['agentFetch', 'forwardFetch'] as const) {
      const { lookup, asked } = rebinding()
      const fetch = outboundFetches({ allowInsecure: true, lookup, agentTimeoutMs: 1_000 })[which]
      // `localhost` would resolve to 127.0.0.1 again if anything looked it up a second time.
      const error = await rejection(fetch(`http://localhost:${port()}/mcp`, { method: 'POST', body: '{}' }))
      expect(error?.code, which).toBe('fetch_failed')
      expect(asked, which).toEqual(['localhost'])
    }
    const { lookup } = rebinding()
    const keys = outboundFetches({ allowInsecure: true, lookup }).keyFetch
    expect((await rejection(keys(`http://localhost:${port()}/jwks.json`, { maxBytes: 1024 })))?.code).toBe(
      'fetch_failed',
    )
    expect(server.requests).toHaveLength(0)
  }, 15_000)

  it('refuse plain http, loopback and IPv4-compatible loopback unless insecure URLs are allowed', async () => {
    const strict = outboundFetches({ allowInsecure: false })
    expect((await rejection(strict.agentFetch(`${server.url}/ok`)))?.code).toBe('fetch_refused')
    expect((await rejection(strict.agentFetch('https://127.0.0.1:9/mcp')))?.code).toBe('fetch_refused')
    expect((await rejection(strict.keyFetch('https://[::127.0.0.1]:9/jwks.json')))?.code).toBe(
      'fetch_refused',
    )
    const insecure = outboundFetches({ allowInsecure: true })
    expect((await rejection(insecure.agentFetch(`http://[::127.0.0.1]:${port()}/mcp`)))?.code).toBe(
      'fetch_refused',
    )
    expect((await rejection(insecure.agentFetch('http://169.254.169.254/')))?.code).toBe('fetch_refused')
    expect(server.requests).toHaveLength(0)
  })

  it('reach a loopback agent when insecure URLs are allowed, and never follow a redirect', async () => {
    const { agentFetch } = outboundFetches({ allowInsecure: true })
    const answer = await agentFetch(`${server.url}/ok`, { method: 'POST', body: '{}' })
    expect(await answer.json()).toEqual({ ok: true })
    expect((await rejection(agentFetch(`${server.url}/moved`)))?.code).toBe('fetch_refused')
    expect(server.requests.map((request) => request.url)).toEqual(['/ok', '/moved'])
  })

  it('give up on a silent agent after the time cap', async () => {
    const hanging = await localServer(() => {
      // never answers
    })
    try {
      const { agentFetch } = outboundFetches({ allowInsecure: true, agentTimeoutMs: 100 })
      const error = await rejection(agentFetch(`${hanging.url}/mcp`))
      expect(error?.message).toMatch(/timed out/)
    } finally {
      await hanging.close()
    }
  })
})
