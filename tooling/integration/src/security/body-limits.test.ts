/**
 * Bounded bodies in every service and route: a 200 MB chunked body is refused with 413 after at most the cap
 * (HTTP_MAX_BODY_BYTES, 1 MiB by default) and the service process's resident memory, read from
 * /proc/<pid>/status while the body streams, grows by less than {@link RSS_BOUND_MIB}. Before the cap the
 * registry grew from 140 to 695 MB, the sales agent from 132 to 736 MB, and the creative agent's /a2a read
 * 1.4 GB and answered 200.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, TOKEN, memoryKiB, startService, streamUntilAnswered, type App } from './services.js'

/** The documented bound on RSS growth while a refused 200 MB body streams in, MiB. */
export const RSS_BOUND_MIB = 48
const TOTAL = 200 * 1024 * 1024

const ROUTES: Record<App, { path: string; headers: Record<string, string>; opening: string }[]> = {
  registry: [
    { path: '/api/brands/resolve/bulk', headers: {}, opening: '{"domains":["' },
    { path: '/api/properties/save', headers: { authorization: `Bearer ${TOKEN}` }, opening: '{"domain":"' },
  ],
  'creative-agent': [
    { path: '/mcp', headers: { authorization: `Bearer ${TOKEN}` }, opening: '{"jsonrpc":"2.0","id":1,"x":"' },
    { path: '/a2a', headers: { authorization: `Bearer ${TOKEN}` }, opening: '{"jsonrpc":"2.0","id":1,"x":"' },
  ],
  receiver: [
    {
      path: '/api/registrations',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      opening: '{"label":"',
    },
  ],
  'sales-agent': [
    { path: '/mcp', headers: { authorization: `Bearer ${TOKEN}` }, opening: '{"jsonrpc":"2.0","id":1,"x":"' },
    { path: '/a2a', headers: {}, opening: '{"jsonrpc":"2.0","id":1,"x":"' },
  ],
}

const figures: string[] = []
afterAll(() => {
  console.log(
    `RSS while a 200 MB chunked body is refused (bound ${RSS_BOUND_MIB} MiB):\n${figures.join('\n')}`,
  )
})

/** A POST declaring `length` bytes and sending a few: the status answered. */
function declared(url: string, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(length) },
      },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
        outgoing.destroy()
      },
    )
    outgoing.on('error', reject)
    outgoing.write('{"a":"')
  })
}

describe.each(Object.keys(ROUTES) as App[])('%s: request bodies are capped', (app) => {
  it('refuses a 200 MB chunked body on every route with 413, RSS growing less than the bound', async () => {
    const service = await startService(app)
    try {
      for (const route of ROUTES[app]) {
        const before = memoryKiB(service.pid)
        const peakBefore = memoryKiB(service.pid, 'VmHWM')
        let peak = before
        const sampler = setInterval(() => (peak = Math.max(peak, memoryKiB(service.pid))), 10)
        const answer = await streamUntilAnswered(
          `${service.url}${route.path}`,
          { 'content-type': 'application/json', ...route.headers },
          route.opening,
          TOTAL,
        )
        clearInterval(sampler)
        peak = Math.max(peak, memoryKiB(service.pid))
        const hwmGrowth = memoryKiB(service.pid, 'VmHWM') - peakBefore
        figures.push(
          `${app} ${route.path}: ${answer.status}, sent ${(answer.sentBeforeAnswer / 1048576).toFixed(1)} MiB before the answer, RSS ${(before / 1024).toFixed(0)} → peak ${(peak / 1024).toFixed(0)} MiB (+${((peak - before) / 1024).toFixed(1)}), VmHWM +${(hwmGrowth / 1024).toFixed(1)} MiB`,
        )
        expect({ path: route.path, status: answer.status }).toEqual({ path: route.path, status: 413 })
        expect(answer.sentBeforeAnswer).toBeLessThan(TOTAL)
        expect(peak - before).toBeLessThan(RSS_BOUND_MIB * 1024)
      }
      expect(await declared(`${service.url}${ROUTES[app][0]!.path}`, TOTAL)).toBe(413)
    } finally {
      await service.stop()
    }
  }, 120_000)
})
