import { SignatureError, type SignatureErrorCode } from './errors.js'
import type { SignatureProfile } from './types.js'

/** A checklist failure independent of profile; {@link fail} turns it into the profile's wire code. */
export type FailureKind =
  | 'header_malformed'
  | 'params_incomplete'
  | 'tag_invalid'
  | 'alg_not_allowed'
  | 'window_invalid'
  | 'components_incomplete'
  | 'components_unexpected'
  | 'key_unknown'
  | 'key_purpose_invalid'
  | 'key_revoked'
  | 'revocation_stale'
  | 'rate_abuse'
  | 'invalid'
  | 'target_uri_malformed'
  | 'digest_mismatch'
  | 'replayed'
  | 'body_malformed'
  | 'key_source_failed'

const WEBHOOK: Record<FailureKind, SignatureErrorCode> = {
  header_malformed: 'webhook_signature_header_malformed',
  params_incomplete: 'webhook_signature_params_incomplete',
  tag_invalid: 'webhook_signature_tag_invalid',
  alg_not_allowed: 'webhook_signature_alg_not_allowed',
  window_invalid: 'webhook_signature_window_invalid',
  components_incomplete: 'webhook_signature_components_incomplete',
  // The webhook profile fixes its components; nothing is ever "unexpected" there.
  components_unexpected: 'webhook_signature_components_incomplete',
  key_unknown: 'webhook_signature_key_unknown',
  key_purpose_invalid: 'webhook_signature_key_purpose_invalid',
  key_revoked: 'webhook_signature_key_revoked',
  revocation_stale: 'webhook_signature_revocation_stale',
  rate_abuse: 'webhook_signature_rate_abuse',
  invalid: 'webhook_signature_invalid',
  target_uri_malformed: 'webhook_target_uri_malformed',
  digest_mismatch: 'webhook_signature_digest_mismatch',
  replayed: 'webhook_signature_replayed',
  body_malformed: 'webhook_body_malformed',
  // The webhook taxonomy has no "keys unavailable" code, and every webhook_* code is terminal for the sender:
  // a trust root that cannot be read now is key_source_unavailable (the receiver answers 503, the sender retries).
  key_source_failed: 'key_source_unavailable',
}

const REQUEST: Record<FailureKind, SignatureErrorCode> = {
  header_malformed: 'request_signature_header_malformed',
  params_incomplete: 'request_signature_params_incomplete',
  tag_invalid: 'request_signature_tag_invalid',
  alg_not_allowed: 'request_signature_alg_not_allowed',
  window_invalid: 'request_signature_window_invalid',
  components_incomplete: 'request_signature_components_incomplete',
  components_unexpected: 'request_signature_components_unexpected',
  key_unknown: 'request_signature_key_unknown',
  key_purpose_invalid: 'request_signature_key_purpose_invalid',
  key_revoked: 'request_signature_key_revoked',
  revocation_stale: 'request_signature_revocation_stale',
  rate_abuse: 'request_signature_rate_abuse',
  invalid: 'request_signature_invalid',
  target_uri_malformed: 'request_target_uri_malformed',
  digest_mismatch: 'request_signature_digest_mismatch',
  replayed: 'request_signature_replayed',
  body_malformed: 'request_body_malformed',
  key_source_failed: 'request_signature_jwks_unavailable',
}

/**
 * The wire code of a failure on a profile (`webhook_signature_*` / `request_signature_*` taxonomies).
 *
 * @example
 * failureCode('request', 'target_uri_malformed') // 'request_target_uri_malformed'
 */
export function failureCode(profile: SignatureProfile, kind: FailureKind): SignatureErrorCode {
  return (profile === 'webhook' ? WEBHOOK : REQUEST)[kind]
}

/**
 * Throws the {@link SignatureError} for a failure at a checklist step.
 *
 * @example
 * if (!input) fail('webhook', 'header_malformed', 'no Signature-Input', 1)
 */
export function fail(
  profile: SignatureProfile,
  kind: FailureKind,
  message: string,
  step: number | string,
  cause?: unknown,
): never {
  throw new SignatureError(
    failureCode(profile, kind),
    message,
    step,
    cause === undefined ? undefined : { cause },
  )
}
