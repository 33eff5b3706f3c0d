import { signMessage, type SignedMessage, type SignOptions } from './sign-core.js'
import {
  verifySignedMessage,
  type ProfileRules,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify-core.js'
import type { HttpMessage } from './types.js'
import { DEFAULT_WEBHOOK_NONCE_RATE, nonceCapForRate } from './replay-cap.js'

/**
 * The webhook profile's `tag` (security.mdx "Webhook callbacks").
 *
 * @example
 * parseSignatureInput(header).params.tag === WEBHOOK_TAG
 */
export const WEBHOOK_TAG = 'adcp/webhook-signing/v1'

/**
 * The five components every webhook signature covers, in the order signers emit them.
 *
 * @example
 * WEBHOOK_COMPONENTS.every((component) => input.components.includes(component))
 */
export const WEBHOOK_COMPONENTS = [
  '@method',
  '@target-uri',
  '@authority',
  'content-type',
  'content-digest',
] as const

const WEBHOOK_RULES: ProfileRules = {
  profile: 'webhook',
  tag: WEBHOOK_TAG,
  // Webhook v1 keeps unpadded base64url for the whole 3.x line (AdCP notes §2.6).
  encoding: 'base64url',
  // A rate, not a count: 5,000 a second per key (2,100,000 live nonces), see replay-cap.ts.
  defaultCap: nonceCapForRate(DEFAULT_WEBHOOK_NONCE_RATE),
  componentsProblem: (covered) => {
    let found = 0
    for (const component of WEBHOOK_COMPONENTS) if (covered.includes(component)) found += 1
    if (found === WEBHOOK_COMPONENTS.length) return undefined
    const missing = WEBHOOK_COMPONENTS.filter((component) => !covered.includes(component))
    return missing.length === 0
      ? undefined
      : { kind: 'components_incomplete', message: `not covered: ${missing.join(', ')}` }
  },
}

/** Options of {@link signWebhook}. */
export type SignWebhookOptions = SignOptions

/** Options of {@link verifyWebhook}. */
export type VerifyWebhookOptions = VerifyOptions

/**
 * Signs an outbound webhook per the AdCP webhook profile (RFC 9421, security.mdx "Webhook callbacks"): adds
 * `Content-Digest` (SHA-256 of the exact body), `Signature-Input` covering `@method @target-uri @authority
 * content-type content-digest` with `created`, `expires` (≤ 300 s), a fresh nonce, `keyid`, `alg` and
 * `tag="adcp/webhook-signing/v1"` under label `sig1`, and `Signature` (unpadded base64url). `Content-Type` must
 * be set. Send the returned body bytes unchanged; sign every delivery attempt anew (fresh nonce per retry).
 *
 * @example
 * const signed = await signWebhook(
 *   { method: 'POST', url: 'https://buyer.example/webhooks/adcp', headers: { 'content-type': 'application/json' }, body },
 *   { key: privateJwk },
 * )
 * await fetch(signed.url, { method: signed.method, headers: signed.headers, body: signed.body })
 */
export function signWebhook(message: HttpMessage, options: SignWebhookOptions): Promise<SignedMessage> {
  return signMessage(
    message,
    { profile: 'webhook', tag: WEBHOOK_TAG, encoding: 'base64url', components: WEBHOOK_COMPONENTS },
    options,
  )
}

/**
 * Verifies a signed webhook with the buyer-side checklist of security.mdx (steps 1 to 14 and 9a, in order):
 * parse (`sig1` only), parameters, tag, algorithm, window, components, key (by `kid` in a JWKS or through a
 * resolver), key purpose (`use: sig`, `key_ops ∋ verify`, `adcp_use` `request-signing` or `webhook-signing`,
 * `kty`/`crv`/`alg` consistent), revocation, per-keyid cap, canonical base and signature (with the `Host` /
 * `:authority` check), `Content-Digest`, replay insert with TTL `(expires − now) + 60`, and duplicate JSON keys.
 * Pass the raw body exactly as received. Resolves with what was verified; rejects with a {@link SignatureError}
 * whose `code` is the `webhook_*` wire code (answer 401 with `error.wwwAuthenticate`).
 *
 * @example
 * const replayStore = new MemoryReplayStore()
 * const verified = await verifyWebhook(
 *   { method: request.method, url: request.url, headers: request.headers, body: new Uint8Array(await request.arrayBuffer()) },
 *   { keys: sellerJwks, replayStore },
 * )
 * verified.keyid // 'seller-2026-01'
 */
export function verifyWebhook(
  message: HttpMessage,
  options: VerifyWebhookOptions,
): Promise<VerifiedSignature> {
  return verifySignedMessage(message, WEBHOOK_RULES, options)
}
