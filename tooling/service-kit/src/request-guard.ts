/**
 * The request guard of every adwire service, run by {@link listen} on the node:http request before a web
 * `Request` is built: the body is read up to a cap (chunked or not) and refused with 413 beyond it, a JSON
 * body nested deeper than a limit or holding a lone UTF-16 surrogate is refused with 400, and a client that
 * goes away mid-body is logged as a client abort and never reaches the routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** Why a request was refused before any route saw it. */
export type RefusalCode = 'payload_too_large' | 'json_too_deep' | 'lone_surrogate'

/** A refused request: its status and code, a sentence for people, and the limit it broke (bytes or levels). */
export interface Refusal {
  readonly status: 400 | 413
  readonly code: RefusalCode
  readonly message: string
  readonly limit?: number
}

/** How long a refused client may keep sending (its bytes read and dropped) after its answer, ms. */
export const LINGER_MS = 5_000
/** How many bytes of a refused body are read and dropped at most after its answer. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024

/**
 * The first reason to refuse a JSON text: nesting deeper than `maxDepth` arrays and objects, or a `\uXXXX`
 * escape of a surrogate without its pair (JSON text in UTF-8 can only carry a lone surrogate that way; raw
 * bytes that are not UTF-8 decode to U+FFFD). Scans the bytes once without parsing, so a 7,000-level body
 * costs 7,000 steps, not a stack.
 *
 * @example
 * jsonProblem(Buffer.from('[[[1]]]'), 2) // { status: 400, code: 'json_too_deep', … , limit: 2 }
 * jsonProblem(Buffer.from('{"a":"\\ud800"}'), 64) // { status: 400, code: 'lone_surrogate', … }
 * jsonProblem(Buffer.from('{"a":"\\ud83d\\ude00"}'), 64) // undefined
 */
export function jsonProblem(bytes: Uint8Array, maxDepth: number): Refusal | undefined {
  let depth = 0
  let inString = false
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!
    if (inString) {
      if (byte === 0x22) inString = false
      else if (byte === 0x5c) {
        const next = bytes[index + 1]
        if (next === 0x75) {
          const unit = hexUnit(bytes, index + 2)
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low =
              bytes[index + 6] === 0x5c && bytes[index + 7] === 0x75 ? hexUnit(bytes, index + 8) : -1
            if (low < 0xdc00 || low > 0xdfff) return loneSurrogate(unit)
            index += 11
            continue
          }
          if (unit >= 0xdc00 && unit <= 0xdfff) return loneSurrogate(unit)
          index += 5
          continue
        }
        index += 1
      }
      continue
    }
    if (byte === 0x22) inString = true
    else if (byte === 0x5b || byte === 0x7b) {
      depth += 1
      if (depth > maxDepth)
        return {
          status: 400,
          code: 'json_too_deep',
          message: `the JSON body is nested deeper than ${maxDepth} levels`,
          limit: maxDepth,
        }
    } else if (byte === 0x5d || byte === 0x7d) depth -= 1
  }
  return undefined
}

const loneSurrogate = (unit: number): Refusal => ({
  status: 400,
  code: 'lone_surrogate',
  message: `the JSON body holds a lone UTF-16 surrogate (\\u${unit.toString(16).padStart(4, '0')}), which is not text`,
})

/** The value of four hex digits at `at`, or -1. */
function hexUnit(bytes: Uint8Array, at: number): number {
  let value = 0
  for (let offset = 0; offset < 4; offset++) {
    const byte = bytes[at + offset]
    if (byte === undefined) return -1
    const digit =
      byte >= 0x30 && byte <= 0x39
        ? byte - 0x30
        : byte >= 0x61 && byte <= 0x66
          ? byte - 0x57
          : byte >= 0x41 && byte <= 0x46
            ? byte - 0x37
            : -1
    if (digit < 0) return -1
    value = value * 16 + digit
  }
  return value
}

/**
 * Ends `response` with an answer given before the whole request body was read (a 413, a 404 to a delivery)
 * so that the client sees it. Node closes such a connection (`Connection: close`) as soon as the answer is
 * written, and a close while the client is still sending meets its next bytes with a reset, which drops the
 * unread answer on its side: it sees a broken connection and retries. So the close lingers: the answer is
 * followed by a half-close (FIN) and the rest of the body is read and dropped for up to {@link LINGER_MS} or
 * {@link LINGER_MAX_BYTES}, then the socket is destroyed.
 *
 * @example
 * answerEarly(request, response, 413, { 'content-type': 'application/json' }, '{"error":"payload_too_large"}')
 */
export function answerEarly(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: string | Uint8Array,
): void {
  const early = !request.complete
  if (early) linger(request)
  response
    .writeHead(status, {
      ...headers,
      'content-length': Buffer.byteLength(body),
      ...(early ? { connection: 'close' } : {}),
    })
    .end(body)
}

function linger(request: IncomingMessage): void {
  const socket = request.socket
  let dropped = 0
  let timer: NodeJS.Timeout | undefined
  const onData = (chunk: Buffer) => {
    dropped += chunk.byteLength
    if (dropped > LINGER_MAX_BYTES) socket.destroy()
  }
  request.on('data', onData)
  request.resume()
  // What Node calls once the `Connection: close` answer is written: half-close and keep reading for a while.
  ;(socket as Socket & { destroySoon: () => void }).destroySoon = () => {
    if (socket.writable) socket.end()
    timer ??= setTimeout(() => socket.destroy(), LINGER_MS)
    timer.unref()
  }
  socket.once('close', () => {
    clearTimeout(timer)
    request.off('data', onData)
  })
}

/** What {@link readGuarded} hands on: the body read in full, or nothing because it was refused or aborted. */
export type GuardOutcome =
  | { readonly kind: 'body'; readonly body: Buffer | undefined }
  | { readonly kind: 'refused'; readonly refusal: Refusal }
  | { readonly kind: 'aborted'; readonly received: number }

/**
 * Reads `request`'s body up to `maxBytes` (refusing a larger declared length without reading it), then checks
 * a JSON one with {@link jsonProblem}. A request without a body (GET, HEAD, no length and not chunked) gives
 * `{ kind: 'body', body: undefined }` at once.
 */
export function readGuarded(
  request: IncomingMessage,
  maxBytes: number,
  maxDepth: number,
): Promise<GuardOutcome> {
  const tooLarge: GuardOutcome = {
    kind: 'refused',
    refusal: {
      status: 413,
      code: 'payload_too_large',
      message: `the body exceeds ${maxBytes} bytes`,
      limit: maxBytes,
    },
  }
  const declared = request.headers['content-length']
  const chunked = /\bchunked\b/i.test(request.headers['transfer-encoding'] ?? '')
  if (request.method === 'GET' || request.method === 'HEAD' || (!chunked && (declared ?? '0') === '0'))
    return Promise.resolve({ kind: 'body', body: undefined })
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.resolve(tooLarge)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const done = (outcome: GuardOutcome) => {
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('close', onClose)
      request.off('error', onClose)
      resolve(outcome)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > maxBytes) {
        chunks.length = 0
        // Paused until the refusal is written, so the rest is read (and dropped) only while lingering.
        request.pause()
        done(tooLarge)
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      const problem = looksJson(request, body) ? jsonProblem(body, maxDepth) : undefined
      done(problem ? { kind: 'refused', refusal: problem } : { kind: 'body', body })
    }
    const onClose = () => done({ kind: 'aborted', received: size })
    request.on('data', onData)
    request.once('end', onEnd)
    request.once('close', onClose)
    request.once('error', onClose)
  })
}

/** A JSON media type, or a body that opens like JSON whatever it is labelled (routes may parse it anyway). */
function looksJson(request: IncomingMessage, body: Buffer): boolean {
  if (/json/i.test(request.headers['content-type'] ?? '')) return true
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    return byte === 0x7b || byte === 0x5b
  }
  return false
}
