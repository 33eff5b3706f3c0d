import { SignatureError, type SignatureErrorCode } from '../errors.js'
import type { SignatureProfile } from '../types.js'

/**
 * How a discovery failure reads on the webhook profile. Resolvers raise the request-profile code (the
 * transport taxonomy names every discovery failure); the webhook taxonomy has none of them, so:
 * - "the trust root says no" (agent not listed, listed twice, brand origin not bound; capabilities without a
 *   `brand_json_url`; `identity.key_origins` not matching the `jwks_uri`, or missing while signing is
 *   declared) is `webhook_signature_key_unknown`: the keyid cannot be tied to one `agents[]` entry
 *   (security.mdx step 7);
 * - "the trust root could not be read" (unreachable, refused by the SSRF rules, malformed; a failed
 *   `get_adcp_capabilities` call) is `key_source_unavailable`: not a wire code, because every `webhook_*`
 *   code is terminal for the sender while this is usually transient; a receiver answers 503 so the seller
 *   retries.
 */
const WEBHOOK_CODES: Partial<Record<SignatureErrorCode, SignatureErrorCode>> = {
  request_signature_key_unknown: 'webhook_signature_key_unknown',
  request_signature_key_revoked: 'webhook_signature_key_revoked',
  request_signature_agent_not_in_brand_json: 'webhook_signature_key_unknown',
  request_signature_brand_json_ambiguous: 'webhook_signature_key_unknown',
  request_signature_brand_origin_mismatch: 'webhook_signature_key_unknown',
  request_signature_brand_json_url_missing: 'webhook_signature_key_unknown',
  request_signature_key_origin_mismatch: 'webhook_signature_key_unknown',
  request_signature_key_origin_missing: 'webhook_signature_key_unknown',
  request_signature_capabilities_unreachable: 'key_source_unavailable',
  request_signature_brand_json_unreachable: 'key_source_unavailable',
  request_signature_brand_json_malformed: 'key_source_unavailable',
  request_signature_jwks_unavailable: 'key_source_unavailable',
  request_signature_jwks_untrusted: 'key_source_unavailable',
}

/**
 * Restates a resolver failure (raised with its request-profile code) for the profile being verified. Codes
 * without a webhook counterpart pass unchanged; the original error is kept as `cause`.
 *
 * @example
 * throw forProfile(new SignatureError('request_signature_jwks_unavailable', 'JWKS unreachable', 7), 'webhook')
 * // SignatureError key_source_unavailable
 */
export function forProfile(error: unknown, profile: SignatureProfile): unknown {
  if (!SignatureError.is(error) || profile === 'request') return error
  const code = WEBHOOK_CODES[error.code]
  if (code === undefined) return error
  return new SignatureError(code, error.message, error.step, { cause: error })
}

/**
 * Wraps a fetch or parse failure of a trust document in the request-profile code for it, keeping the
 * original as `cause`. SSRF refusals of a JWKS fetch are `request_signature_jwks_untrusted`.
 *
 * @example
 * throw discoveryError('jwks', error, 'JWKS of https://seller.example unavailable')
 */
export function discoveryError(
  document: 'jwks' | 'brand_json' | 'adagents',
  error: unknown,
  message: string,
): SignatureError {
  const refused = SignatureError.is(error) && error.code === 'fetch_refused'
  const malformed = SignatureError.is(error) && error.code === 'key_source_invalid'
  const detail = SignatureError.is(error) ? `: ${error.message}` : ''
  let code: SignatureErrorCode
  if (document === 'jwks' || document === 'adagents') {
    code = refused ? 'request_signature_jwks_untrusted' : 'request_signature_jwks_unavailable'
  } else {
    code = malformed ? 'request_signature_brand_json_malformed' : 'request_signature_brand_json_unreachable'
  }
  return new SignatureError(code, `${message}${detail}`, 7, { cause: error })
}
