import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentFetch } from './agent-fetch.js'
import { json, localServer, type LocalServer } from './test-support.js'

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

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error) => error,
  )

describe('createAgentFetch', () => {
  it('refuses plain http and non-public addresses unless insecure URLs are allowed', async () => {
    const strict = createAgentFetch({ allowInsecure: false })
    expect((await rejection(strict(`${server.url}/ok`)))?.message).toMatch(/https only/)
    const loopback = await rejection(strict('https://127.0.0.1:9/mcp'))
    expect(loopback).toMatchObject({ code: 'fetch_refused' })
    const metadata = await rejection(createAgentFetch({ allowInsecure: true })('http://169.254.169.254/'))
    expect(metadata).toMatchObject({ code: 'fetch_refused' })
    expect(server.requests).toHaveLength(0)
  })

  it('reaches a loopback agent when insecure URLs are allowed, and never follows a redirect', async () => {
    const insecure = createAgentFetch({ allowInsecure: true })
    const answer = await insecure(`${server.url}/ok`, { method: 'POST', body: '{}' })
    expect(await answer.json()).toEqual({ ok: true })
    expect(await rejection(insecure(`${server.url}/moved`))).toBeInstanceOf(Error)
    expect(server.requests.map((request) => request.url)).toEqual(['/ok', '/moved'])
  })

  it('gives up after its time cap', async () => {
    const hanging = await localServer(() => {
      // never answers
    })
    try {
      const capped = createAgentFetch({ allowInsecure: true, timeoutMs: 100 })
      expect((await rejection(capped(`${hanging.url}/mcp`)))?.name).toMatch(/TimeoutError|AbortError/)
    } finally {
      await hanging.close()
    }
  })
})
