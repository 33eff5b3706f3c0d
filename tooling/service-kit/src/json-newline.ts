/**
 * Every JSON answer of a service ends with a newline, as `curl` users and line-oriented tools expect: one place
 * (the listener) for every route, error handler, task server and SDK response of the app behind it.
 */

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i
const NEWLINE = 0x0a

/**
 * `response` with a `\n` after its body when it is JSON (`application/json`, `application/*+json`) and does not
 * end with one already; any other response (HTML, SSE streams, no body) is returned as it is.
 *
 * @example
 * await (await withJsonNewline(Response.json({ ok: true }))).text() // '{"ok":true}\n'
 */
export async function withJsonNewline(response: Response): Promise<Response> {
  const type = response.headers.get('content-type')
  if (response.body === null || type === null || !JSON_TYPE.test(type)) return response
  const bytes = new Uint8Array(await response.arrayBuffer())
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  const init = { status: response.status, statusText: response.statusText, headers }
  if (bytes.length === 0 || bytes[bytes.length - 1] === NEWLINE) return new Response(bytes, init)
  const body = new Uint8Array(bytes.length + 1)
  body.set(bytes)
  body[bytes.length] = NEWLINE
  return new Response(body, init)
}
