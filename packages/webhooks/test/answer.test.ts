/**
 * `receiver.answer(delivery)`: the core without web objects. A delivery given as its fields (headers as a plain
 * object, as node:http has them) is answered exactly as the same delivery through `handle(request)`; the body
 * reader is called only after the checks that need no body, and a reader refusing the size is answered 413.
 */
import { describe, expect, it } from 'vitest'
import { BodyTooLargeError, type IncomingDelivery, type Registration } from '../src/index.js'
import { envelope, receiverWith, sellerKey, signed, URL_BASE } from '../src/testing/receiver.js'

const key = sellerKey()

const setup = () =>
  receiverWith([
    { id: 'sig', auth: { mode: 'rfc9421', keys: key.jwks }, shape: 'mcp' } satisfies Registration,
  ])

/** The fields of a signed web Request, headers as a plain object with a repeated field as a list. */
async function fieldsOf(request: Request): Promise<IncomingDelivery & { reads: number }> {
  const bytes = new Uint8Array(await request.arrayBuffer())
  const headers: Record<string, string[]> = {}
  for (const [name, value] of request.headers) headers[name.toUpperCase()] = [value]
  const delivery = {
    method: request.method,
    url: request.url,
    headers,
    reads: 0,
    async readBody(limit: number) {
      delivery.reads += 1
      if (bytes.byteLength > limit) throw new BodyTooLargeError(limit)
      return bytes
    },
  }
  return delivery
}

describe('receiver.answer', () => {
  it('answers the fields of a delivery as handle() answers the request: accepted, then duplicate', async () => {
    const { receiver, published } = setup()
    const payload = envelope()
    const first = await fieldsOf(await signed(key, 'sig', payload))
    const accepted = await receiver.answer(first)
    expect(accepted).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: JSON.stringify({ status: 'accepted' }),
    })
    expect(first.reads).toBe(1)
    const viaHandle = await receiver.handle(await signed(key, 'sig', payload))
    expect([viaHandle.status, await viaHandle.json()]).toEqual([200, { status: 'duplicate' }])
    expect(published).toHaveLength(1)
  })

  it('refuses without reading the body: unknown registration, wrong method, wrong media type', async () => {
    const { receiver } = setup()
    const delivery = await fieldsOf(await signed(key, 'sig', envelope()))
    const unknown = await receiver.answer({ ...delivery, url: `${URL_BASE}/nobody` })
    expect([unknown.status, JSON.parse(unknown.body).error.code]).toEqual([404, 'unknown_registration'])
    const get = await receiver.answer({ ...delivery, method: 'GET' })
    expect([get.status, get.headers.allow]).toEqual([405, 'POST'])
    const text = await receiver.answer({ ...delivery, headers: { 'Content-Type': 'text/plain' } })
    expect([text.status, JSON.parse(text.body).error.code]).toEqual([415, 'unsupported_media_type'])
    expect(delivery.reads).toBe(0)
  })

  it('answers 413 when the reader refuses the size, and 503 when it fails otherwise', async () => {
    const { receiver, logs } = setup()
    const delivery = await fieldsOf(await signed(key, 'sig', envelope({ pad: 'x'.repeat(2_000_000) })))
    const big = await receiver.answer(delivery)
    expect([big.status, JSON.parse(big.body).error.code]).toEqual([413, 'payload_too_large'])
    const broken = await receiver.answer({
      ...delivery,
      readBody: () => Promise.reject(new Error('the client went away')),
    })
    expect([broken.status, broken.headers['retry-after']]).toEqual([503, '5'])
    expect(logs.map((entry) => entry.code)).toEqual(['payload_too_large', 'store_unavailable'])
  })
})
