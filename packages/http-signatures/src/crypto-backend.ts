import type * as NodeCrypto from 'node:crypto'
import type { webcrypto } from 'node:crypto'

/**
 * node:crypto when the runtime has it (Node, Bun, Deno and workerd expose `process.getBuiltinModule`), else
 * `undefined` and everything runs on WebCrypto. Loaded without a static import so the package stays a web
 * standards library; the fast path is measured in bench/verify.bench.ts (SHA-256 of 2 KB: 2.6 µs against
 * about 30 µs through `crypto.subtle`).
 *
 * @example
 * if (nodeCrypto) nodeCrypto.verify(null, data, keyObject, signature)
 */
export const nodeCrypto: typeof NodeCrypto | undefined = (() => {
  try {
    const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    const module = runtime?.getBuiltinModule?.('node:crypto') as typeof NodeCrypto | undefined
    return typeof module?.verify === 'function' && typeof module.createPublicKey === 'function'
      ? module
      : undefined
  } catch {
    return undefined
  }
})()

const encoder = new TextEncoder()

/**
 * Whether a message has a body: a non-empty string or byte array.
 *
 * @example
 * hasBody('') // false
 */
export function hasBody(body: Uint8Array | string | null | undefined): body is Uint8Array | string {
  return body !== undefined && body !== null && body.length > 0
}

/**
 * SHA-256 of a body (a string is hashed as its UTF-8 bytes) computed at once on node:crypto; `undefined` when
 * the runtime has no node:crypto (use {@link sha256}, which falls back to `crypto.subtle`).
 *
 * @example
 * const digest = sha256Now('{}') ?? (await sha256('{}'))
 */
export function sha256Now(data: Uint8Array | string): Uint8Array | undefined {
  // crypto.hash (Node ≥ 20.12) skips the Hash object; createHash elsewhere. A Buffer is a Uint8Array.
  if (!nodeCrypto) return undefined
  return typeof nodeCrypto.hash === 'function'
    ? (nodeCrypto.hash('sha256', data, 'buffer') as unknown as Uint8Array)
    : nodeCrypto.createHash('sha256').update(data).digest()
}

/**
 * Whether the SHA-256 of a body (a string is hashed as its UTF-8 bytes) equals `expected`, computed at once on
 * node:crypto and compared in time that depends only on the lengths; `undefined` when the runtime has no
 * node:crypto (use {@link sha256} then). The digest comes back as a `binary` (latin1) string, one character a byte: a
 * Buffer would cost node:crypto about half a microsecond more.
 *
 * @example
 * const matches = sha256MatchesNow(expected, body) ?? bytesEqual(expected, await sha256(body))
 */
export function sha256MatchesNow(expected: Uint8Array, data: Uint8Array | string): boolean | undefined {
  if (!nodeCrypto) return undefined
  if (typeof nodeCrypto.hash !== 'function') return bytesEqual(expected, sha256Now(data)!)
  const digest = nodeCrypto.hash('sha256', data, 'binary')
  if (digest.length !== expected.length) return false
  let difference = 0
  for (let index = 0; index < digest.length; index += 1)
    difference |= digest.charCodeAt(index) ^ expected[index]!
  return difference === 0
}

/**
 * SHA-256 of a body (a string is hashed as its UTF-8 bytes), on node:crypto when available, else `crypto.subtle`.
 *
 * @example
 * const digest = await sha256('{}')
 */
export async function sha256(data: Uint8Array | string): Promise<Uint8Array> {
  const now = sha256Now(data)
  if (now) return new Uint8Array(now.buffer, now.byteOffset, now.byteLength)
  const bytes = typeof data === 'string' ? encoder.encode(data) : data
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as webcrypto.BufferSource))
}

/**
 * Compares two byte strings in time that depends only on their lengths (digests are public-length values).
 *
 * @example
 * bytesEqual(new Uint8Array([1]), new Uint8Array([1])) // true
 */
export function bytesEqual(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false
  let difference = 0
  for (let index = 0; index < left.length; index += 1) difference |= left[index]! ^ right[index]!
  return difference === 0
}
