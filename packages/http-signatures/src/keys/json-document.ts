import { SignatureError } from '../errors.js'
import { findDuplicateKeys } from '../json-duplicates.js'
import type { AdcpJwk } from '../types.js'

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Parses a fetched trust document (brand.json, JWKS, adagents.json, revocation list) as strict JSON: valid
 * UTF-8, no comments or trailing commas, and no object with a repeated member name, which `JSON.parse` would
 * silently collapse (AdCP 3.1 security.mdx, brand.json discovery step 4). Messages name the defect, never the
 * content.
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * readStrictJson(new TextEncoder().encode('{"keys":[]}')) // { keys: [] }
 */
export function readStrictJson(body: Uint8Array | string): unknown {
  let text: string
  try {
    text = typeof body === 'string' ? body : decoder.decode(body)
  } catch {
    throw new SignatureError('key_source_invalid', 'document is not valid UTF-8')
  }
  const report = findDuplicateKeys(text)
  if (!report.wellFormed) throw new SignatureError('key_source_invalid', 'document is not well-formed JSON')
  if (report.duplicates.length > 0) {
    throw new SignatureError('key_source_invalid', 'document repeats a member name within one object')
  }
  return JSON.parse(text) as unknown
}

/** Whether a value is a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Validates a JWKS (RFC 7517 §5) and indexes it by `kid`. `keys` must be an array of objects; entries
 * without a string `kid` cannot be named by a `keyid` and are skipped; a `kid` used twice makes the whole set
 * ambiguous and is refused (AdCP: a kid must not collide with any other entry, whatever its `adcp_use`).
 * Each key must have a string `kty`. Keys are returned as published; purpose checks are the verifier's
 * (checklist step 8).
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * indexJwks({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: '...', kid: 'k1' }] }).get('k1')
 */
export function indexJwks(value: unknown): ReadonlyMap<string, AdcpJwk> {
  if (!isObject(value) || !Array.isArray(value.keys)) {
    throw new SignatureError('key_source_invalid', 'a JWKS is an object with a "keys" array')
  }
  const index = new Map<string, AdcpJwk>()
  for (const key of value.keys as unknown[]) {
    if (!isObject(key)) throw new SignatureError('key_source_invalid', 'every JWKS entry must be an object')
    if (typeof key.kid !== 'string' || key.kid === '') continue
    if (typeof key.kty !== 'string') {
      throw new SignatureError('key_source_invalid', `JWKS key "${printable(key.kid)}" has no kty`)
    }
    if (index.has(key.kid)) {
      throw new SignatureError('key_source_invalid', `JWKS has kid "${printable(key.kid)}" twice`)
    }
    index.set(key.kid, Object.freeze({ ...key }) as AdcpJwk)
  }
  return index
}

/** A kid as it may appear in a message: printable ASCII, at most 64 characters. */
export function printable(value: string): string {
  const cleaned = value.replace(/[^\x20-\x7e]/g, '?')
  return cleaned.length > 64 ? `${cleaned.slice(0, 64)}...` : cleaned
}
