import { SignatureError } from '../errors.js'
import type { Jwks } from '../types.js'
import { indexJwks, isObject, readStrictJson } from './json-document.js'
import { decodeBase64url, verifyFlattenedJws, type JwsKeyLookup } from './jws.js'

/** A revocation list as verifiers use it. Times in Unix seconds. */
export interface RevocationListSnapshot {
  readonly issuer: string
  readonly updated: number
  readonly nextUpdate: number
  readonly revokedKids: ReadonlySet<string>
  readonly revokedJtis: ReadonlySet<string>
}

/** The JSON members of a revocation list (AdCP 3.1 security.mdx, revocation list format). */
export interface RevocationListJson {
  readonly version?: 1
  readonly issuer?: string
  /** RFC 3339 date-time or Unix seconds. */
  readonly updated: string | number
  /** RFC 3339 date-time or Unix seconds; after `updated`. */
  readonly next_update: string | number
  readonly revoked_kids: readonly string[]
  readonly revoked_jtis?: readonly string[]
}

/** How a fetched list is authenticated. */
export interface RevocationVerification {
  /** Keys of the list's signer. When given, only a flattened JWS verifying under one of them is accepted. */
  readonly signingKeys?: Jwks | JwsKeyLookup
  /** Required protected `typ` of the JWS, such as `adcp-gov-revocation+jws`. Default: any. */
  readonly expectedTyp?: string
  /** Required `issuer`. Default: any. */
  readonly issuer?: string
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

/**
 * Reads a revocation list document: a flattened JWS whose payload is the list (verified when `signingKeys`
 * is configured, and then mandatory), or, without `signingKeys`, the plain JSON list (or a JWS payload taken
 * unverified: the list is then trusted as far as the TLS connection it came over, like any plain list).
 * The list must have `version: 1`, `updated` < `next_update`, and string arrays `revoked_kids` (and
 * `revoked_jtis`, optional).
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * const list = await readRevocationList(JSON.parse(text), { issuer: 'https://seller.example' })
 * list.revokedKids.has('seller-2025-07')
 */
export async function readRevocationList(
  document: unknown,
  verification: RevocationVerification = {},
): Promise<RevocationListSnapshot> {
  const { signingKeys } = verification
  const jws =
    isObject(document) && typeof document.payload === 'string' && typeof document.signature === 'string'
  let payload: unknown = document
  if (signingKeys !== undefined) {
    if (!jws) throw invalid('a signed (flattened JWS) list is required')
    const lookup = typeof signingKeys === 'function' ? signingKeys : lookupIn(signingKeys)
    const bytes = await verifyFlattenedJws(document, lookup, {
      ...(verification.expectedTyp ? { expectedTyp: verification.expectedTyp } : {}),
    })
    payload = readStrictJson(bytes)
  } else if (jws) {
    payload = readStrictJson(decodeBase64url(document.payload as string, 'payload'))
  }
  return parseRevocationList(payload, verification.issuer)
}

/**
 * Validates the JSON members of a list and converts its times to Unix seconds.
 *
 * @throws {SignatureError} `key_source_invalid`
 * @example
 * parseRevocationList({ version: 1, issuer: 'https://s.example', updated: '2026-04-18T14:00:00Z', next_update: '2026-04-18T14:15:00Z', revoked_kids: [] })
 */
export function parseRevocationList(value: unknown, issuer?: string): RevocationListSnapshot {
  if (!isObject(value)) throw invalid('not a JSON object')
  if (value.version !== undefined && value.version !== 1) throw invalid('version must be 1')
  if (value.issuer !== undefined && typeof value.issuer !== 'string') throw invalid('issuer must be a string')
  if (issuer !== undefined && value.issuer !== issuer) throw invalid('unexpected issuer')
  const updated = seconds(value.updated, 'updated')
  const nextUpdate = seconds(value.next_update, 'next_update')
  if (!(nextUpdate > updated)) throw invalid('next_update must be after updated')
  return {
    issuer: typeof value.issuer === 'string' ? value.issuer : '',
    updated,
    nextUpdate,
    revokedKids: new Set(strings(value.revoked_kids, 'revoked_kids')),
    revokedJtis: new Set(value.revoked_jtis === undefined ? [] : strings(value.revoked_jtis, 'revoked_jtis')),
  }
}

function invalid(message: string): SignatureError {
  return new SignatureError('key_source_invalid', `revocation list: ${message}`)
}

function seconds(value: unknown, name: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value
  if (typeof value === 'string' && RFC3339.test(value)) {
    const parsed = Date.parse(value)
    if (Number.isFinite(parsed)) return parsed / 1000
  }
  throw invalid(`${name} must be an RFC 3339 date-time or Unix seconds`)
}

function strings(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw invalid(`${name} must be an array of strings`)
  }
  return value as string[]
}

function lookupIn(jwks: Jwks): JwsKeyLookup {
  const index = indexJwks(jwks)
  return async (kid) => index.get(kid)
}
