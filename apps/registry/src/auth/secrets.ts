/** Random secrets, their stored hashes, and the PKCE S256 check. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A URL-safe random string carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** The stored form of a secret: lowercase hex SHA-256. Secrets themselves are never stored. */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** A new organization API key: `sk_` followed by 32 random bytes, base64url. */
export function newApiKey(): string {
  return `sk_${randomToken(32)}`
}

/** Whether a bearer credential has the shape of an organization API key. */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith('sk_')
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * Checks a PKCE `code_verifier` against the stored S256 `code_challenge` (RFC 7636 §4.6): the verifier must be
 * 43–128 unreserved characters and BASE64URL(SHA256(verifier)) must equal the challenge.
 */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'))
  const expected = Buffer.from(challenge)
  return computed.length === expected.length && timingSafeEqual(computed, expected)
}

/** Whether a `code_challenge` has the shape of an S256 challenge (43 base64url characters). */
export function isS256Challenge(challenge: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(challenge)
}
