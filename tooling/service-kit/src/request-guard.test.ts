import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { jsonProblem, listen } from './index.js'

const bytes = (text: string) => Buffer.from(text)

describe('jsonProblem', () => {
  it('counts nesting outside strings only, up to the limit inclusive', () => {
    expect(jsonProblem(bytes('[[[1]]]'), 3)).toBeUndefined()
    expect(jsonProblem(bytes('[[[1]]]'), 2)).toMatchObject({ status: 400, code: 'json_too_deep', limit: 2 })
    expect(jsonProblem(bytes('{"a":"[[[[{{{{"}'), 1)).toBeUndefined()
    expect(jsonProblem(bytes('{"a":"\\"[[[["}'), 1)).toBeUndefined()
    expect(jsonProblem(bytes(`${'['.repeat(7000)}${']'.repeat(7000)}`), 64)?.code).toBe('json_too_deep')
  })

  it('finds a lone surrogate escape, high or low, in values and keys, and passes pairs and escaped backslashes', () => {
    expect(jsonProblem(bytes('{"a":"\\ud800"}'), 64)?.code).toBe('lone_surrogate')
    expect(jsonProblem(bytes('{"a":"\\uDC00x"}'), 64)?.code).toBe('lone_surrogate')
    expect(jsonProblem(bytes('{"\\ud800":1}'), 64)?.code).toBe('lone_surrogate')
    expect(jsonProblem(bytes('{"a":"\\ud800\\u0041"}'), 64)?.code).toBe('lone_surrogate')
    expect(jsonProblem(bytes('{"a":"\\ud83d\\ude00"}'), 64)).toBeUndefined()
    expect(jsonProblem(bytes('{"a":"\\\\ud800"}'), 64)).toBeUndefined()
    expect(jsonProblem(bytes('{"a":"\\u00e9 😀"}'), 64)).toBeUndefined()
  })
})

/** A chunked POST of `chunks`; the status and body answered. */
function post(url: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: 'POST', agent: false }, (response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    outgoing.on('error', reject)
    for (const chunk of chunks) outgoing.write(chunk)
    outgoing.end()
  })
}

describe('listen: the request guard', () => {
  it('hands a body within the cap to the handler intact, and refuses a larger chunked one with 413', async () => {
    const listener = await listen({
      port: 0,
      fetch: async (request) => new Response(await request.text()),
      limits: { maxBodyBytes: 1_024 },
    })
    try {
      expect(await post(listener.url, ['{"a":', '"é"}'])).toEqual({ status: 200, body: '{"a":"é"}' })
      const refused = await post(listener.url, ['{"a":"', 'x'.repeat(2_000), '"}'])
      expect(refused.status).toBe(413)
      expect(JSON.parse(refused.body)).toEqual({
        error: 'payload_too_large',
        message: 'the body exceeds 1024 bytes',
      })
      const deep = await post(listener.url, ['[[[[', ']]]]'])
      expect(deep.status).toBe(200)
    } finally {
      await listener.close()
    }
  })

  it("answers refusals in the service's shape through `refuse`", async () => {
    const listener = await listen({
      port: 0,
      fetch: () => new Response('ok'),
      limits: { maxJsonDepth: 8 },
      refuse: (refusal) => Response.json({ mine: refusal.code }, { status: refusal.status }),
    })
    try {
      expect(await post(listener.url, ['['.repeat(9), ']'.repeat(9)])).toEqual({
        status: 400,
        body: '{"mine":"json_too_deep"}',
      })
    } finally {
      await listener.close()
    }
  })

  it('closes a client address’s sockets beyond maxConnectionsPerClient, not another address’s', async () => {
    const listener = await listen({ port: 0, limits: { maxConnectionsPerClient: 2 } })
    const sockets: Socket[] = []
    const open = (localAddress: string) =>
      new Promise<Socket>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: listener.port, localAddress }, () =>
          resolve(socket),
        )
        socket.on('error', () => undefined)
        sockets.push(socket)
      })
    const closed = (socket: Socket) =>
      new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(true)
        socket.once('close', () => resolve(true))
        setTimeout(() => resolve(false), 500)
      })
    try {
      const mine = [await open('127.0.0.1'), await open('127.0.0.1'), await open('127.0.0.1')]
      const other = await open('127.0.0.2')
      expect(await Promise.all([...mine, other].map(closed))).toEqual([false, false, true, false])
    } finally {
      for (const socket of sockets) socket.destroy()
      await listener.close(100)
    }
  })
})
