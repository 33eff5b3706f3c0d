/**
 * The benches' lean load generator (bench/load.ts) against a real node:http server on 127.0.0.1: the bytes it
 * sends are the request as signed (Host, headers, body), it reads Content-Length and chunked answers, and a
 * connection the server closed while idle is opened again.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { parseAnswer, prepare, runLoad } from '../bench/load.js'

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

async function serve(handler: (request: IncomingMessage, body: string, response: ServerResponse) => void) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => handler(request, Buffer.concat(chunks).toString('utf8'), response))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

describe('the bench load generator', () => {
  it('sends each request as given and reads fixed-length and chunked answers', async () => {
    const seen: Array<{ host?: string; type?: string; path?: string; body: string }> = []
    const { url } = await serve((request, body, response) => {
      seen.push({
        host: request.headers.host,
        type: request.headers['content-type'],
        path: request.url,
        body,
      })
      if (body.includes('chunked')) {
        response.write('{"status":')
        response.end('"accepted"}')
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"accepted"}')
      }
    })
    const requests = ['plain', 'chunked', 'plain é', 'chunked ü'].map((text) =>
      prepare({
        url: `${url}/webhooks/abc?x=1`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      }),
    )
    const bodies: string[] = []
    const result = await runLoad(requests, 2, (answer) => {
      bodies.push(answer.body)
      return answer.status === 200 ? undefined : `status ${answer.status}`
    })
    expect(bodies).toEqual(Array(4).fill('{"status":"accepted"}'))
    expect(seen.map((request) => JSON.parse(request.body).text).sort()).toEqual(
      ['chunked', 'chunked ü', 'plain', 'plain é'].sort(),
    )
    expect(seen.every((request) => request.host === new URL(url).host)).toBe(true)
    expect(seen.every((request) => request.path === '/webhooks/abc?x=1')).toBe(true)
    expect(seen.every((request) => request.type === 'application/json')).toBe(true)
    expect(result.rate).toBeGreaterThan(0)
  })

  it('opens a new connection when the server closed the idle one, and reports a failed check', async () => {
    const { server, url } = await serve((_request, _body, response) => {
      response.writeHead(500, { 'content-length': '4' }).end('oops')
    })
    server.keepAliveTimeout = 1
    const request = prepare({ url, headers: {}, body: '{}' })
    const failure = runLoad([request], 1, (answer) => `status ${answer.status}: ${answer.body}`)
    await expect(failure).rejects.toThrow('status 500: oops')
    // Two requests a lane, the server closing each idle socket after 1 ms: every request is still answered.
    let answered = 0
    const slow = Array.from({ length: 4 }, () => request)
    await expect(
      runLoad(slow, 2, () => {
        answered += 1
        return undefined
      }),
    ).resolves.toMatchObject({ rate: expect.any(Number) })
    expect(answered).toBe(4)
  })

  it('waits for a whole answer', () => {
    const whole = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello')
    expect(parseAnswer(whole.subarray(0, 30))).toBeUndefined()
    expect(parseAnswer(whole)).toEqual({ status: 200, body: 'hello', size: whole.byteLength })
    const chunked = Buffer.from(
      'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    )
    expect(parseAnswer(chunked.subarray(0, chunked.byteLength - 2))).toBeUndefined()
    expect(parseAnswer(chunked)).toEqual({ status: 201, body: 'abc', size: chunked.byteLength })
  })
})
