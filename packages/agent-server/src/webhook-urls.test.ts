import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookFetch, webhookUrlProblem } from './webhook-urls.js'

let server: Server
let port: number
const seen: string[] = []
beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.url ?? '/')
    response.writeHead(request.url === '/moved' ? 302 : 204, { location: '/hook' }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error & { code?: string }) => error,
  )

describe('webhook destinations', () => {
  it('a rebinding name is delivered to the address the check saw, never to 127.0.0.1', async () => {
    const asked: string[] = []
    const fetch = webhookFetch({
      allowInsecure: true,
      lookup: async (hostname) => {
        asked.push(hostname)
        return [{ address: asked.length === 1 ? '93.184.215.14' : '127.0.0.1', family: 4 }]
      },
    })
    // `localhost` would resolve to 127.0.0.1 if anything looked the name up a second time.
    const error = await rejection(
      fetch(`http://localhost:${port}/hook`, {
        method: 'POST',
        body: '{}',
        signal: AbortSignal.timeout(2_000),
      }),
    )
    expect(error).toBeInstanceOf(Error)
    expect(asked).toEqual(['localhost'])
    expect(seen).toEqual([])
  })

  it('refuses http, loopback and IPv4-compatible loopback without ALLOW_INSECURE_WEBHOOK_URLS', async () => {
    const strict = webhookFetch({ allowInsecure: false })
    expect((await rejection(strict(`http://127.0.0.1:${port}/hook`)))?.code).toBe('fetch_refused')
    expect((await rejection(strict(`https://[::127.0.0.1]:${port}/hook`)))?.code).toBe('fetch_refused')
    expect(webhookUrlProblem('https://[::127.0.0.1]/hook', false)).toBe('must be a public address')
    expect(webhookUrlProblem('https://[::7f00:1]/hook', true)).toBe('must be a public address')
    expect(seen).toEqual([])
  })

  it('refuses a userinfo (user:password@, user@, an empty one) with or without ALLOW_INSECURE_WEBHOOK_URLS', () => {
    for (const allowInsecure of [false, true])
      for (const url of [
        'https://user:secret@buyer.example/hook',
        'https://user@buyer.example/hook',
        'https://:secret@buyer.example/hook',
        'https://@buyer.example/hook',
        'HTTPS://u:p@Buyer.example:8443/hook?x=@y',
      ])
        expect([url, webhookUrlProblem(url, allowInsecure)]).toEqual([
          url,
          'must not carry credentials (user:password@)',
        ])
    // An @ after the authority is not a userinfo.
    expect(webhookUrlProblem('https://buyer.example/hooks/@me?who=a@b#c@d', false)).toBeUndefined()
  })

  it('delivers to a local receiver when insecure URLs are allowed, without following redirects', async () => {
    const fetch = webhookFetch({ allowInsecure: true })
    expect((await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}' })).status).toBe(204)
    expect((await rejection(fetch(`http://127.0.0.1:${port}/moved`, { method: 'POST' })))?.code).toBe(
      'fetch_refused',
    )
    expect(seen).toEqual(['/hook', '/moved'])
  })
})
