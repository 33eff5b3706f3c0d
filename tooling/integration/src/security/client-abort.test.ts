/**
 * A client that goes away mid-body is logged by the HTTP layer as `client_abort` and never reaches the routes
 * (before: the sales agent logged it as `503 store_unavailable`).
 */
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { TOKEN, startService } from './services.js'

describe.each(['sales-agent', 'registry'] as const)('%s: a client abort mid-body', (app) => {
  it('is logged as client_abort, not as a store failure', async () => {
    const service = await startService(app)
    try {
      const path = app === 'registry' ? '/api/brands/resolve/bulk' : '/mcp'
      await new Promise<void>((resolve) => {
        const outgoing = httpRequest(`${service.url}${path}`, {
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': '100000',
            authorization: `Bearer ${TOKEN}`,
          },
        })
        outgoing.on('error', () => resolve())
        outgoing.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products"', () =>
          setTimeout(() => {
            outgoing.destroy()
            resolve()
          }, 200),
        )
      })
      const deadline = Date.now() + 10_000
      while (!service.lines.some((line) => line.includes('client_abort')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50))
      const abort = service.lines.find((line) => line.includes('client_abort'))
      // Written as every log entry of the app is: `name: {json}` (service-kit's serviceLog).
      expect(abort?.startsWith(`${app}: {`)).toBe(true)
      expect(abort && JSON.parse(abort.slice(abort.indexOf('{')))).toMatchObject({
        event: 'client_abort',
        method: 'POST',
        path,
      })
      expect(service.lines.filter((line) => /store_unavailable|"status":\s*5\d\d/.test(line))).toEqual([])
    } finally {
      await service.stop()
    }
  }, 60_000)
})
