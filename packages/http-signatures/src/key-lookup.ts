import { keyShapeProblem } from './algorithms.js'
import { SignatureError } from './errors.js'
import { fail } from './failure.js'
import { staticRevocation } from './revocation.js'
import type {
  AdcpJwk,
  Jwks,
  KeyResolutionContext,
  KeyResolver,
  KeySource,
  ResolvedKey,
  RevocationSource,
  SignatureAlgorithm,
  SignatureProfile,
} from './types.js'

/** Revocation as verifiers take it: a source, or a plain list of revoked keyids. */
export type RevocationInput = RevocationSource | { readonly revokedKids: readonly string[] }

// Accepted `adcp_use` by profile (security.mdx checklists, step 8; webhook positive vector 008).
const PURPOSES: Readonly<Record<SignatureProfile, ReadonlySet<string>>> = {
  webhook: new Set(['request-signing', 'webhook-signing']),
  request: new Set(['request-signing']),
}

const jwksIndexes = new WeakMap<Jwks, Map<string, AdcpJwk | null>>()
const revocationSources = new WeakMap<object, RevocationSource>()

function isResolver(keys: KeySource): keys is KeyResolver {
  return typeof (keys as KeyResolver).resolve === 'function'
}

function indexOf(jwks: Jwks): Map<string, AdcpJwk | null> {
  let index = jwksIndexes.get(jwks)
  if (!index) {
    index = new Map()
    for (const jwk of Array.isArray(jwks.keys) ? jwks.keys : []) {
      if (typeof jwk?.kid !== 'string') continue
      // A kid published twice cannot be tied to one key (security.mdx: kid unique within the JWKS).
      index.set(jwk.kid, index.has(jwk.kid) ? null : jwk)
    }
    jwksIndexes.set(jwks, index)
  }
  return index
}

/**
 * Step 7: the key for a keyid from a static JWKS (looked up by `kid`; indexed once per JWKS object) or a
 * {@link KeyResolver}. Throws `*_signature_key_unknown` when there is none; a resolver's {@link SignatureError}
 * passes through, any other failure becomes `key_source_unavailable` (webhook: no wire code, answer 503) or
 * `request_signature_jwks_unavailable` (request, the retryable code) with the original as `cause`.
 *
 * @example
 * const { jwk } = await resolveKey({ keys: [jwk] }, 'seller-2026', { profile: 'webhook', now, created })
 */
export async function resolveKey(
  keys: KeySource,
  keyid: string,
  context: KeyResolutionContext,
): Promise<ResolvedKey> {
  const { profile } = context
  let resolved: ResolvedKey | undefined
  if (isResolver(keys)) {
    try {
      resolved = await keys.resolve(keyid, context)
    } catch (error) {
      if (SignatureError.is(error)) throw error
      fail(profile, 'key_source_failed', `key lookup for "${keyid}" failed`, 7, error)
    }
  } else {
    const jwk = indexOf(keys).get(keyid)
    if (jwk) resolved = { jwk }
  }
  if (!resolved?.jwk) fail(profile, 'key_unknown', `keyid "${keyid}" is not in the signer's JWKS`, 7)
  return resolved
}

/**
 * Step 7 without a promise for a static JWKS: the key for `keyid`, or `*_signature_key_unknown` thrown when
 * there is none. `undefined` for a {@link KeyResolver} (call {@link resolveKey} then).
 *
 * @example
 * const resolved = resolveKeyNow(keys, keyid, 'webhook') ?? (await resolveKey(keys, keyid, context))
 */
export function resolveKeyNow(
  keys: KeySource,
  keyid: string,
  profile: SignatureProfile,
): ResolvedKey | undefined {
  if (isResolver(keys)) return undefined
  const jwk = indexOf(keys).get(keyid)
  if (!jwk) fail(profile, 'key_unknown', `keyid "${keyid}" is not in the signer's JWKS`, 7)
  return { jwk }
}

/**
 * Step 8: why a JWK may not verify this profile's signatures with `algorithm`, or `undefined`: `use` must be
 * `"sig"`, `key_ops` must include `"verify"`, `adcp_use` must be `request-signing` (or, for webhooks, the
 * deprecated `webhook-signing`), and `kty`/`crv`/`alg` must fit the algorithm. Absent members fail.
 *
 * @example
 * keyPurposeProblem({ ...jwk, adcp_use: 'governance-signing' }, 'ed25519', 'request') // 'adcp_use ...'
 */
export function keyPurposeProblem(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  profile: SignatureProfile,
): string | undefined {
  if (jwk.use !== 'sig') return `JWK use is ${JSON.stringify(jwk.use)}, not "sig"`
  if (!Array.isArray(jwk.key_ops) || !jwk.key_ops.includes('verify'))
    return 'JWK key_ops does not include "verify"'
  if (typeof jwk.adcp_use !== 'string' || !PURPOSES[profile].has(jwk.adcp_use)) {
    return `JWK adcp_use ${JSON.stringify(jwk.adcp_use)} is not accepted for ${profile} signatures`
  }
  return keyShapeProblem(jwk, algorithm)
}

/**
 * The {@link RevocationSource} for a verifier option (a plain `{ revokedKids }` list is wrapped once per object).
 *
 * @example
 * revocationSource({ revokedKids: ['old-key'] })?.check('old-key', now) // 'revoked'
 */
export function revocationSource(input: RevocationInput | undefined): RevocationSource | undefined {
  if (input === undefined) return undefined
  if (typeof (input as RevocationSource).check === 'function') return input as RevocationSource
  let source = revocationSources.get(input)
  if (!source) {
    source = staticRevocation((input as { revokedKids: readonly string[] }).revokedKids ?? [])
    revocationSources.set(input, source)
  }
  return source
}
