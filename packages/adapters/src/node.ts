/**
 * `@adwire/adapters/node`: a Node `IncomingMessage` as a web-standard `Request` (streaming the body untouched,
 * so that the receiver checks its size and hashes the exact bytes), and a `Response` written back to a
 * `ServerResponse`. Used by the Express and Fastify adapters, and directly with `node:http`:
 *
 * @example
 * createServer(nodeHandler((request) => receiver.handle(request))).listen(3000, '127.0.0.1')
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { RawBodyUnavailableError } from './errors.js'

export { RawBodyUnavailableError } from './errors.js'

export interface ToWebRequestOptions {
  /**
   * The scheme and host the sender signed (`@target-uri`), e.g. `https://buyer.example` behind a TLS proxy.
   * Default: `http://` and the request's `Host` header.
   */
  readonly origin?: string
  /** The raw body bytes, when a framework captured them already; otherwise the body stream is passed on. */
  readonly body?: Uint8Array
  /** The path and query the sender signed, when the framework rewrote `req.url`. Default: `req.url`. */
  readonly path?: string
  /** How to fix the app when the body stream was already consumed (stack-specific). */
  readonly fix?: string
}

const NODE_FIX =
  'Pass the IncomingMessage to toWebRequest() before anything reads it, or pass the captured bytes as `body`.'

/** True when something already read the body stream (a body parser) or set `req.body`. */
export function bodyConsumed(req: IncomingMessage & { body?: unknown }): boolean {
  return req.body !== undefined || req.readableDidRead || req.readableEnded
}

/**
 * The web `Request` for a Node request: same method, URL (on `origin`), headers (repeated ones kept) and body
 * (the captured bytes, or the untouched stream). Throws {@link RawBodyUnavailableError} when the stream was
 * consumed and no bytes are given: verifying a re-encoded body would fail every signature for a reason
 * nobody could see.
 */
export function toWebRequest(req: IncomingMessage, options: ToWebRequestOptions = {}): Request {
  const method = req.method ?? 'GET'
  const origin = (options.origin ?? `http://${req.headers.host ?? '127.0.0.1'}`).replace(/\/+$/, '')
  const init: RequestInit & { duplex?: 'half' } = { method, headers: headersOf(req.rawHeaders) }
  if (method !== 'GET' && method !== 'HEAD') {
    if (options.body !== undefined) {
      init.body = options.body
    } else {
      if (bodyConsumed(req)) throw new RawBodyUnavailableError(options.fix ?? NODE_FIX)
      init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>
      init.duplex = 'half'
    }
  }
  return new Request(`${origin}${options.path ?? req.url ?? '/'}`, init)
}

/** Headers of a Node request, repeated ones kept, HTTP/2 pseudo-headers left out. */
export function headersOf(rawHeaders: readonly string[]): Headers {
  const headers = new Headers()
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!
    if (!name.startsWith(':')) headers.append(name, rawHeaders[index + 1]!)
  }
  return headers
}

/** Writes a web `Response` (status, headers including every `Set-Cookie`, body) to a Node response. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = new Uint8Array(await response.arrayBuffer())
  res.statusCode = response.status
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') res.setHeader(name, value)
  }
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) res.setHeader('set-cookie', cookies)
  // Answered before the body was read (413): the rest of it would arrive as the next request on this socket.
  if (res.req !== undefined && !res.req.complete) res.setHeader('connection', 'close')
  res.end(body)
}

export interface NodeHandlerOptions extends Pick<ToWebRequestOptions, 'origin'> {
  /** Called with what went wrong before a response existed. Default: `console.error`. */
  readonly onError?: (error: unknown) => void
}

/**
 * A `node:http` request listener around a web handler (`receiver.handle`). A misconfigured app
 * ({@link RawBodyUnavailableError}) or a thrown handler answers 500 with the reason and reports it to `onError`.
 */
export function nodeHandler(
  handle: (request: Request) => Response | Promise<Response>,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const onError = options.onError ?? ((error: unknown) => console.error(error))
  return (req, res) => {
    const answer = async () => {
      try {
        const request = toWebRequest(req, options.origin === undefined ? {} : { origin: options.origin })
        await writeWebResponse(res, await handle(request))
      } catch (error) {
        onError(error)
        if (!res.headersSent) await writeWebResponse(res, internalError(error))
        else res.destroy()
      }
    }
    void answer()
  }
}

/** The 500 answer for an error no handler turned into a response. */
export function internalError(error: unknown): Response {
  const code = error instanceof RawBodyUnavailableError ? error.code : 'internal_error'
  const message = error instanceof RawBodyUnavailableError ? error.message : 'internal error'
  return Response.json({ error: { code, message } }, { status: 500 })
}

/**
 * Reads a Node request body into bytes, refusing more than `limit` bytes (the declared `Content-Length`
 * first). Resolves `undefined` when the body is larger.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return undefined
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) return undefined
    chunks.push(chunk)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}
