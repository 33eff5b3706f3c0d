import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withJsonNewline } from './json-newline.js'
import { listen, type Listener } from './listen.js'

describe('withJsonNewline', () => {
  it('adds one newline to a JSON body, application/*+json included, and keeps status and headers', async () => {
    const answer = await withJsonNewline(
      Response.json({ ok: true }, { status: 201, headers: { 'x-kept': '1', 'content-length': '11' } }),
    )
    expect(answer.status).toBe(201)
    expect(answer.headers.get('x-kept')).toBe('1')
    expect(answer.headers.get('content-length')).toBeNull()
    expect(await answer.text()).toBe('{"ok":true}\n')
    const problem = new Response('{"title":"x"}', { headers: { 'content-type': 'application/problem+json' } })
    expect(await (await withJsonNewline(problem)).text()).toBe('{"title":"x"}\n')
    const done = new Response('[1]\n', { headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(await (await withJsonNewline(done)).text()).toBe('[1]\n')
  })

  it('leaves other answers alone: HTML, event streams, no body', async () => {
    const html = new Response('<p>hi</p>', { headers: { 'content-type': 'text/html' } })
    expect(await withJsonNewline(html)).toBe(html)
    const stream = new Response('data: {}\n\n', { headers: { 'content-type': 'text/event-stream' } })
    expect(await withJsonNewline(stream)).toBe(stream)
    const empty = new Response(null, { status: 204, headers: { 'content-type': 'application/json' } })
    expect(await withJsonNewline(empty)).toBe(empty)
    const ndjson = new Response('{}', { headers: { 'content-type': 'application/x-ndjson' } })
    expect(await withJsonNewline(ndjson)).toBe(ndjson)
  })
})

describe('listen', () => {
  let listener: Listener
  beforeAll(async () => {
    listener = await listen({ port: 0, fetch: () => Response.json({ a: 1 }) })
  })
  afterAll(() => listener.close())

  it('ends every JSON answer of the service with a newline, over HTTP', async () => {
    const response = await fetch(listener.url)
    expect(await response.text()).toBe('{"a":1}\n')
    const head = await fetch(listener.url, { method: 'HEAD' })
    expect(head.status).toBe(200)
  })
})
