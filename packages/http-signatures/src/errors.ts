/** Webhook-profile wire codes (AdCP 3.1 security.mdx, webhook error taxonomy). */
export type WebhookSignatureErrorCode =
  | 'webhook_signature_header_malformed'
  | 'webhook_signature_params_incomplete'
  | 'webhook_signature_tag_invalid'
  | 'webhook_signature_alg_not_allowed'
  | 'webhook_signature_window_invalid'
  | 'webhook_signature_components_incomplete'
  | 'webhook_signature_key_unknown'
  | 'webhook_signature_key_purpose_invalid'
  | 'webhook_signature_key_revoked'
  | 'webhook_signature_revocation_stale'
  | 'webhook_signature_rate_abuse'
  | 'webhook_signature_invalid'
  | 'webhook_target_uri_malformed'
  | 'webhook_signature_digest_mismatch'
  | 'webhook_signature_replayed'
  | 'webhook_body_malformed'
  | 'webhook_mode_mismatch'

/** Request-profile (transport) wire codes, including the brand.json discovery chain. */
export type RequestSignatureErrorCode =
  | 'request_signature_required'
  | 'request_target_uri_malformed'
  | 'request_signature_header_malformed'
  | 'request_signature_params_incomplete'
  | 'request_signature_tag_invalid'
  | 'request_signature_alg_not_allowed'
  | 'request_signature_window_invalid'
  | 'request_signature_components_incomplete'
  | 'request_signature_components_unexpected'
  | 'request_signature_key_unknown'
  | 'request_signature_key_purpose_invalid'
  | 'request_signature_key_revoked'
  | 'request_signature_revocation_stale'
  | 'request_signature_invalid'
  | 'request_signature_digest_mismatch'
  | 'request_body_malformed'
  | 'request_signature_replayed'
  | 'request_signature_rate_abuse'
  | 'request_signature_jwks_unavailable'
  | 'request_signature_jwks_untrusted'
  | 'request_signature_brand_json_url_missing'
  | 'request_signature_capabilities_unreachable'
  | 'request_signature_brand_json_unreachable'
  | 'request_signature_brand_json_malformed'
  | 'request_signature_brand_origin_mismatch'
  | 'request_signature_agent_not_in_brand_json'
  | 'request_signature_brand_json_ambiguous'
  | 'request_signature_key_origin_mismatch'
  | 'request_signature_key_origin_missing'

/** Codes of the deprecated HMAC-SHA256 and Bearer webhook schemes (adwire's names; the spec names none). */
export type LegacyAuthErrorCode =
  | 'webhook_hmac_missing'
  | 'webhook_hmac_malformed'
  | 'webhook_hmac_timestamp_invalid'
  | 'webhook_hmac_invalid'
  | 'webhook_bearer_invalid'
  | 'webhook_credential_invalid'
  | 'duplicate_key_input'

/**
 * Codes of key discovery and fetching outside a verification (configuration, SSRF refusals).
 * `key_source_unavailable`: a webhook verifier could not read the signer's trust root (brand.json, JWKS,
 * adagents.json) right now; the webhook taxonomy has no code for that, and every `webhook_*` code is terminal
 * for the sender, so a receiver answers 503 and lets the sender retry.
 */
export type KeyResolutionErrorCode =
  'key_source_invalid' | 'key_source_unavailable' | 'fetch_refused' | 'fetch_failed'

export type SignatureErrorCode =
  WebhookSignatureErrorCode | RequestSignatureErrorCode | LegacyAuthErrorCode | KeyResolutionErrorCode

const brand = Symbol.for('@adwire/http-signatures/SignatureError')

/**
 * Every failure of this package. `code` is the AdCP wire code (`webhook_signature_digest_mismatch`), which a
 * receiver returns as `WWW-Authenticate: Signature error="<code>"`; `step` is the checklist step that failed
 * (informational: graders compare codes only).
 *
 * @example
 * try { await verifyWebhook(message, { keys, now }) }
 * catch (error) { if (SignatureError.is(error)) return unauthorized(error.code) }
 */
export class SignatureError extends Error {
  override readonly name = 'SignatureError'
  readonly [brand] = true
  constructor(
    readonly code: SignatureErrorCode,
    message: string,
    readonly step?: number | string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  static is(value: unknown): value is SignatureError {
    return typeof value === 'object' && value !== null && brand in value
  }

  /** The `WWW-Authenticate` value for a 401 carrying this error: `Signature error="<code>"`. */
  get wwwAuthenticate(): string {
    return `Signature error="${this.code}"`
  }
}
