import type { HeaderInput } from '@adwire/http-signatures'
import canonicalize from 'canonicalize'
import { Rejection } from './respond.js'

/** Refuses a body beyond the receiver's limit (from `IncomingDelivery.readBody`): answered 413. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError'
  constructor(readonly limit: number) {
    super(`webhook bodies are limited to ${limit} bytes`)
  }
}

/**
 * The value of header `name` (lower case) in WHATWG `Headers` or a plain object (names in any case, a
 * repeated field as a list, joined with ", " as `Headers` does); undefined when absent.
 */
export function headerValue(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>
  let value = record[name]
  if (value === undefined) {
    for (const key in record) {
      if (key.toLowerCase() === name && Object.prototype.hasOwnProperty.call(record, key)) {
        value = record[key]
        break
      }
    }
  }
  return value === undefined ? undefined : typeof value === 'string' ? value : value.join(', ')
}

/** Rejects anything but `application/json` (parameters such as charset allowed), before any signature work. */
export function requireJson(headers: HeaderInput): void {
  const type = headerValue(headers, 'content-type')
  const media = type?.split(';')[0]?.trim().toLowerCase()
  if (media !== 'application/json') {
    throw new Rejection(415, 'unsupported_media_type', 'webhook deliveries must be application/json')
  }
}

/**
 * Reads the raw body bytes, refusing (413) a declared or actual size beyond `limit` before hashing anything.
 * The bytes are kept exactly as received: signatures and digests are over them.
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  // A declared length within the limit: the HTTP layer reads exactly that many bytes, so the body is taken
  // whole. This skips the web stream, which servers such as @hono/node-server build only when `body` is read.
  if (declared !== null && /^\d+$/.test(declared)) {
    const bytes = new Uint8Array(await request.arrayBuffer())
    if (bytes.byteLength > limit) throw tooLarge(limit)
    return bytes
  }
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

const tooLarge = (limit: number) => new BodyTooLargeError(limit)

/** The 413 answer to a body beyond the limit. */
export const tooLargeRejection = (error: BodyTooLargeError) =>
  new Rejection(413, 'payload_too_large', error.message)

/**
 * The RFC 8785 form of a parsed body, which keys the delivery. JSON allows an escaped unpaired UTF-16 surrogate
 * (`"\ud83d"`), but I-JSON and RFC 8785 forbid it and it has no canonical form: the body is refused (400,
 * recorded as a failure) rather than answered as a store failure the sender would retry forever.
 */
export function canonicalJson(payload: unknown): string {
  try {
    return canonicalize(payload) ?? ''
  } catch {
    throw new Rejection(
      400,
      'invalid_json',
      'the body holds an unpaired UTF-16 surrogate escape, which RFC 8785 (I-JSON) forbids',
    )
  }
}
