import type { webcrypto } from 'node:crypto'
import { SignatureError } from '../errors.js'
import type { AdcpJwk } from '../types.js'
import { isObject, printable, readStrictJson } from './json-document.js'

/** Finds the public key of a JWS `kid`. */
export type JwsKeyLookup = (kid: string) => Promise<AdcpJwk | undefined>

const ALGORITHMS = {
  EdDSA: { kty: 'OKP', crv: 'Ed25519', importAs: { name: 'Ed25519' }, verifyAs: { name: 'Ed25519' } },
  ES256: {
    kty: 'EC',
    crv: 'P-256',
    importAs: { name: 'ECDSA', namedCurve: 'P-256' },
    verifyAs: { name: 'ECDSA', hash: 'SHA-256' },
  },
} as const

/**
 * Verifies a JWS in the flattened JSON serialization (RFC 7515 §7.2.2) signed with EdDSA (Ed25519) or ES256,
 * the two algorithms AdCP allows, and returns the payload bytes. The protected header must name `alg` and
 * `kid`, must not carry `crit`, and must carry `typ` equal to `expectedTyp` (case-insensitive) when one is
 * given; the key's `kty`/`crv` (and `alg`, `use`, `key_ops` when present) must fit. WebCrypto only.
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * const payload = await verifyFlattenedJws(document, async (kid) => keys.get(kid), { expectedTyp: 'adcp-gov-revocation+jws' })
 */
export async function verifyFlattenedJws(
  document: Record<string, unknown>,
  keys: JwsKeyLookup,
  options: { readonly expectedTyp?: string } = {},
): Promise<Uint8Array> {
  const { protected: protectedHeader, payload, signature } = document
  if (typeof protectedHeader !== 'string' || typeof payload !== 'string' || typeof signature !== 'string') {
    throw invalid('not a flattened JWS (protected, payload, signature)')
  }
  const header = readStrictJson(decodeBase64url(protectedHeader, 'protected header'))
  if (!isObject(header)) throw invalid('the protected header is not a JSON object')
  if (header.crit !== undefined) throw invalid('the protected header has crit extensions')
  const alg = header.alg
  if (alg !== 'EdDSA' && alg !== 'ES256') throw invalid('alg must be EdDSA or ES256')
  if (typeof header.kid !== 'string') throw invalid('the protected header has no kid')
  if (options.expectedTyp !== undefined) {
    if (typeof header.typ !== 'string' || header.typ.toLowerCase() !== options.expectedTyp.toLowerCase()) {
      throw invalid('unexpected typ')
    }
  }
  const jwk = await keys(header.kid)
  if (jwk === undefined) throw invalid(`unknown kid "${printable(header.kid)}"`)
  const spec = ALGORITHMS[alg]
  const purposeOk =
    jwk.kty === spec.kty &&
    jwk.crv === spec.crv &&
    (jwk.alg === undefined || jwk.alg === alg) &&
    (jwk.use === undefined || jwk.use === 'sig') &&
    (jwk.key_ops === undefined || jwk.key_ops.includes('verify'))
  if (!purposeOk) throw invalid(`key "${printable(header.kid)}" does not fit alg ${alg}`)
  let verified: boolean
  try {
    const key = await crypto.subtle.importKey(
      'jwk',
      {
        kty: jwk.kty,
        crv: jwk.crv,
        x: jwk.x,
        ...(jwk.y === undefined ? {} : { y: jwk.y }),
      } as webcrypto.JsonWebKey,
      spec.importAs,
      false,
      ['verify'],
    )
    const input = new TextEncoder().encode(`${protectedHeader}.${payload}`)
    verified = await crypto.subtle.verify(spec.verifyAs, key, decodeBase64url(signature, 'signature'), input)
  } catch (error) {
    if (SignatureError.is(error)) throw error
    throw new SignatureError('key_source_invalid', 'JWS key could not be used', undefined, { cause: error })
  }
  if (!verified) throw invalid('signature does not verify')
  return decodeBase64url(payload, 'payload')
}

function invalid(message: string): SignatureError {
  return new SignatureError('key_source_invalid', `JWS: ${message}`)
}

/**
 * Decodes strict unpadded base64url (RFC 7515 §2).
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * decodeBase64url('AQID', 'payload') // Uint8Array [1, 2, 3]
 */
export function decodeBase64url(text: string, what: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw invalid(`${what} is not base64url`)
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4))
  return Uint8Array.from(binary, (character) => character.charCodeAt(0))
}
