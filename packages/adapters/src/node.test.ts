import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler, RawBodyUnavailableError, toWebRequest } from './node.js'
import { keys, listen, memoryReceiver, postWebhook, webhookBody, type Keys } from './testing/fixtures.js'

let key: Keys
beforeAll(async () => {
  key = await keys()
})

describe('@adwire/adapters/node', () => {
  it('hands the receiver the exact bytes, URL and headers: a signed delivery is accepted once', async () => {
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const url = `${await listen(createServer(nodeHandler((request) => receiver.handle(request))))}/webhooks/adcp`
    const body = webhookBody()
    const first = await postWebhook(key.seller.privateJwk, url, body)
    expect([first.status, await first.json()]).toEqual([200, { status: 'accepted' }])
    const retry = await postWebhook(key.seller.privateJwk, url, body)
    expect([retry.status, await retry.json()]).toEqual([200, { status: 'duplicate' }])
    expect(published).toHaveLength(1)
    expect(new TextDecoder().decode(published[0]!.body)).toBe(body)
  })

  it('keeps repeated headers and honours an origin given for a TLS proxy', async () => {
    let seen: Request | undefined
    const handler = nodeHandler(
      async (request) => {
        seen = request
        const bytes = new Uint8Array(await request.arrayBuffer())
        return new Response(createHash('sha256').update(bytes).digest('hex'))
      },
      { origin: 'https://buyer.example/' },
    )
    const base = await listen(createServer(handler))
    const body = 'ünïcode and\r\nline breaks'
    const response = await fetch(`${base}/hooks/x?a=1`, {
      method: 'POST',
      headers: [
        ['content-type', 'text/plain'],
        ['x-twice', 'one'],
        ['x-twice', 'two'],
      ],
      body,
    })
    expect(await response.text()).toBe(createHash('sha256').update(body).digest('hex'))
    expect(seen!.url).toBe('https://buyer.example/hooks/x?a=1')
    expect(seen!.headers.get('x-twice')).toBe('one, two')
  })

  it('refuses with a how-to-fix error, never a signature failure, when something read the body first', async () => {
    const errors: unknown[] = []
    const { receiver, published } = memoryReceiver(key.seller.jwks)
    const handler = nodeHandler((request) => receiver.handle(request), {
      onError: (error) => errors.push(error),
    })
    // A body parser in front of the adapter: it consumes the stream and keeps only the parsed JSON.
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        ;(req as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        handler(req, res)
      })
    })
    const response = await postWebhook(key.seller.privateJwk, `${await listen(server)}/webhooks/adcp`)
    expect(response.status).toBe(500)
    const answer = (await response.json()) as { error: { code: string; message: string } }
    expect(answer.error.code).toBe('raw_body_unavailable')
    expect(answer.error.message).toMatch(/toWebRequest\(\) before anything reads it/)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(RawBodyUnavailableError)
    expect(published).toEqual([])
  })

  it('takes bytes captured earlier instead of the consumed stream', async () => {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', async () => {
        const request = toWebRequest(req, { body: new Uint8Array(Buffer.concat(chunks)) })
        res.end(await request.text())
      })
    })
    const response = await fetch(await listen(server), { method: 'POST', body: '{"kept": true}' })
    expect(await response.text()).toBe('{"kept": true}')
  })
})
