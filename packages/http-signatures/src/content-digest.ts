import { decodeBase64Either, encodeBase64 } from './base64.js'
import { bytesEqual, sha256, sha256MatchesNow } from './crypto-backend.js'
import { SignatureError } from './errors.js'
import { isLoneByteSequence, parseStructuredDictionary } from './structured-fields.js'
import type { SignatureProfile } from './types.js'

/**
 * The `Content-Digest` field value (RFC 9530 §2) for a body: `sha-256=:<standard base64, padded>:`, the form
 * every AdCP vector and the reference SDK emit (AdCP notes §2.6). Hash the exact bytes you send.
 *
 * @example
 * await createContentDigest('{"hello":"world"}')
 * // 'sha-256=:k6I5cakU5erL8KjSUVTNownDwccvu5kU1Hxg88toFYg=:'
 */
export async function createContentDigest(body: Uint8Array | string | null | undefined): Promise<string> {
  return `sha-256=:${encodeBase64(await sha256(body ?? ''))}:`
}

/**
 * The `sha-256` member of a `Content-Digest` value: its bytes, `null` when the field names no `sha-256` digest,
 * `undefined` when the field is malformed (not an RFC 8941 dictionary, `sha-256` given twice, a value that is
 * not a byte sequence, or base64 that mixes the standard and URL-safe alphabets). Either alphabet is accepted,
 * padded or not.
 *
 * @example
 * readSha256Digest('sha-256=:AAAA:, sha-256=:AAAA:') // undefined
 */
export function readSha256Digest(value: string): Uint8Array | null | undefined {
  // The usual field, one `sha-256` member, is decoded in place; anything else takes the dictionary parser.
  if (isLoneByteSequence(value, 'sha-256=:')) return decodeBase64Either(value, 9, value.length - 1)
  const parsed = parseStructuredDictionary(value)
  if (!parsed) return undefined
  let found: Uint8Array | null = null
  for (const member of parsed.members) {
    if (member.key !== 'sha-256') continue
    if (found !== null) return undefined
    const item = parsed.dictionary.get('sha-256')
    if (
      !item ||
      Array.isArray(item[0]) ||
      !(item[0] instanceof ArrayBuffer) ||
      member.binaries.length !== 1
    ) {
      return undefined
    }
    const decoded = decodeBase64Either(member.binaries[0]!)
    if (decoded === undefined) return undefined
    found = decoded
  }
  return found
}

/**
 * Whether a parsed `sha-256` digest matches the body, compared in constant time.
 *
 * @example
 * await digestMatches(readSha256Digest(header)!, body)
 */
export async function digestMatches(
  expected: Uint8Array,
  body: Uint8Array | string | null | undefined,
): Promise<boolean> {
  return bytesEqual(expected, await sha256(body ?? ''))
}

/**
 * {@link digestMatches} without a promise on node:crypto; `undefined` when only `crypto.subtle` can hash (call
 * {@link digestMatches} then).
 *
 * @example
 * const matches = digestMatchesNow(expected, body) ?? (await digestMatches(expected, body))
 */
export function digestMatchesNow(
  expected: Uint8Array,
  body: Uint8Array | string | null | undefined,
): boolean | undefined {
  return sha256MatchesNow(expected, body ?? '')
}

/**
 * Checks a `Content-Digest` value against a body (RFC 9530; AdCP webhook checklist step 11). Throws
 * `*_signature_header_malformed` for a malformed field and `*_signature_digest_mismatch` when there is no
 * `sha-256` member or it does not match; `profile` picks the code prefix.
 *
 * @example
 * await verifyContentDigest(request.headers.get('content-digest')!, rawBody, { profile: 'webhook' })
 */
export async function verifyContentDigest(
  value: string,
  body: Uint8Array | string | null | undefined,
  options: { readonly profile?: SignatureProfile } = {},
): Promise<void> {
  const profile = options.profile ?? 'webhook'
  const expected = readSha256Digest(value)
  if (expected === undefined) {
    throw new SignatureError(`${profile}_signature_header_malformed`, 'Content-Digest is malformed', 1)
  }
  if (expected === null || !(await digestMatches(expected, body))) {
    throw new SignatureError(
      `${profile}_signature_digest_mismatch`,
      'Content-Digest does not match the body',
      11,
    )
  }
}
