import { verifyBytes, verifyBytesNow } from './algorithms.js'
import { authorityHeaderProblem, canonicalTarget } from './canonicalize.js'
import { digestMatches, digestMatchesNow } from './content-digest.js'
import { hasBody } from './crypto-backend.js'
import { SignatureError } from './errors.js'
import { fail, type FailureKind } from './failure.js'
import { normalizeHeaders, type HeaderFields } from './headers.js'
import { isPlainJsonBytes } from './json-bytes.js'
import { findDuplicateKeys } from './json-duplicates.js'
import {
  keyPurposeProblem,
  resolveKey,
  resolveKeyNow,
  revocationSource,
  type RevocationInput,
} from './key-lookup.js'
import { nonceCapForRate } from './replay-cap.js'
import { composeSignatureBase } from './signature-base.js'
import type { SignatureEncoding } from './signature-input.js'
import type {
  HttpMessage,
  KeySource,
  ReplayStore,
  RevocationStatus,
  SignatureAlgorithm,
  SignatureProfile,
} from './types.js'
import { readSignedMessage } from './verify-read.js'

/** Options shared by {@link verifyWebhook} and {@link verifyRequest}. */
export interface VerifyOptions {
  /** The signer's keys: a JWKS (looked up by `kid`) or a resolver (brand.json, adagents.json pins, ...). */
  readonly keys: KeySource
  /** Unix seconds; default the clock. */
  readonly now?: number
  /**
   * Replay cache for steps 9a, 12 and 13. Without one those steps are skipped: supply one in production. Its own
   * failures (a database down) propagate unchanged, so the caller answers 503 rather than a terminal 401.
   */
  readonly replayStore?: ReplayStore
  /**
   * Step 9: a revocation source, or a plain list of revoked keyids. Without one, step 9 is skipped. A source that
   * throws is treated as stale (`*_signature_revocation_stale`: fail closed).
   */
  readonly revocation?: RevocationInput
  /**
   * Per-keyid replay cap (steps 9a and 13) as a sustained rate: messages a second one keyid may send without
   * being refused as `*_signature_rate_abuse`. The store then holds at most `ceil(rate × 420)` live nonces for
   * the keyid (a nonce lives at most 420 s, see {@link nonceCapForRate}). Default for webhooks 5,000 a second
   * (2,100,000 nonces). Ignored when {@link VerifyOptions.maxNoncesPerKey} is given.
   */
  readonly maxNonceRatePerKey?: number
  /**
   * Per-keyid replay cap (steps 9a and 13) as a count of live nonces; when given it wins over
   * {@link VerifyOptions.maxNonceRatePerKey}. Kept for compatibility: a count cap `n` sustains `n / 420`
   * messages a second. Default for requests 1,000,000 (about 2,380 a second); webhooks default to the rate.
   */
  readonly maxNoncesPerKey?: number
  /** Step 14: reject a body that is not JSON or has duplicate object keys. Default true. */
  readonly checkBody?: boolean
  /**
   * Where node:crypto checks the signature: `'auto'` (default) inline when this is the only verification
   * under way and on the libuv thread pool when others are; `'always'` on the thread pool (a busy server: the
   * event loop goes on parsing and committing while another core verifies); `'never'` inline. Runtimes
   * without node:crypto use WebCrypto whatever this says.
   */
  readonly offload?: 'auto' | 'always' | 'never'
}

/** What a successful verification established (always for label `sig1`). */
export interface VerifiedSignature {
  readonly keyid: string
  /** The signer identity the key resolver bound the key to (`agents[].url`), when known. */
  readonly signer?: string
  readonly algorithm: SignatureAlgorithm
  readonly label: 'sig1'
  readonly components: readonly string[]
  readonly created: number
  readonly expires: number
  readonly nonce: string
}

/** What differs between the webhook and the request profile. */
export interface ProfileRules {
  readonly profile: SignatureProfile
  readonly tag: string
  readonly encoding: SignatureEncoding
  /** Per-keyid replay cap in live nonces when the options give neither a count nor a rate. */
  readonly defaultCap: number
  /** Step 6; `undefined` when the covered components are acceptable. */
  readonly componentsProblem: (
    covered: readonly string[],
    hasBody: boolean,
  ) => { kind: FailureKind; message: string } | undefined
}

const encoder = new TextEncoder()
// The signature base bytes for an inline check are encoded into one reused buffer (UTF-8 takes at most three
// bytes per UTF-16 code unit; a longer base gets its own array).
const scratch = new Uint8Array(8192)
const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Runs the AdCP verifier checklist (security.mdx: webhook steps 1 to 14 with 9a; request steps 1 to 14 after the
 * pre-checks) in the specified order, short-circuiting on the first failure with the profile's wire code.
 * {@link verifyWebhook} and {@link verifyRequest} call it with their {@link ProfileRules}.
 *
 * @example
 * const verified = await verifySignedMessage(message, WEBHOOK_RULES, { keys, replayStore })
 */
export function verifySignedMessage(
  message: HttpMessage,
  rules: ProfileRules,
  options: VerifyOptions,
  fields?: HeaderFields,
): Promise<VerifiedSignature> {
  // One async layer: the checklist's own promise is the result (its first failure a rejection, never a throw).
  return checklist(message, rules, options, fields)
}

/** Verifications under way in this process (between entry and result): more than one means crypto is offloaded. */
let active = 0

async function checklist(
  message: HttpMessage,
  rules: ProfileRules,
  options: VerifyOptions,
  given: HeaderFields | undefined,
): Promise<VerifiedSignature> {
  if (typeof message !== 'object' || message === null)
    fail(rules.profile, 'header_malformed', 'no message to verify', 1)
  const fields = given ?? normalizeHeaders(message.headers)
  options ??= {} as VerifyOptions
  active += 1
  try {
    const { profile } = rules
    const now = Math.floor(options.now ?? Date.now() / 1000)

    // 1 to 6: the fields read and checked, before any key or store is consulted.
    const received = readSignedMessage(message, rules, fields, now)
    const { input, signature, digest, body } = received
    const { created, expires, nonce, keyid, alg } = received.params

    // 7. Key. 8. Key purpose and algorithm consistency.
    if (typeof options.keys !== 'object' || options.keys === null)
      fail(profile, 'key_source_failed', 'no keys configured', 7)
    // A static JWKS answers at once; only a resolver is awaited.
    const resolved =
      resolveKeyNow(options.keys, keyid, profile) ??
      (await resolveKey(options.keys, keyid, { profile, now, created }))
    const purposeProblem = keyPurposeProblem(resolved.jwk, alg, profile)
    if (purposeProblem) fail(profile, 'key_purpose_invalid', purposeProblem, 8)

    // 9. Revocation. 9a. Per-keyid cap, read only: both before any cryptography.
    const revocation = revocationSource(options.revocation)
    if (revocation) {
      let status: RevocationStatus
      try {
        status = await revocation.check(keyid, now)
      } catch (error) {
        // A list that cannot be consulted is treated as one not refreshed in time: fail closed.
        if (SignatureError.is(error)) throw error
        return fail(profile, 'revocation_stale', 'the revocation list could not be consulted', 9, error)
      }
      if (status === 'revoked') fail(profile, 'key_revoked', `keyid "${keyid}" is revoked`, 9)
      if (status === 'stale') fail(profile, 'revocation_stale', 'the revocation list is stale', 9)
    }
    const store = options.replayStore
    const cap =
      options.maxNoncesPerKey ??
      (options.maxNonceRatePerKey === undefined
        ? rules.defaultCap
        : nonceCapForRate(options.maxNonceRatePerKey))
    if (store && (await store.atCapacity(keyid, cap, now)))
      fail(profile, 'rate_abuse', `keyid "${keyid}" is at its replay cap`, '9a')

    // 10. Canonical target and authority (checked against :authority / Host), the base, the signature.
    const target = canonicalTarget(message.url)
    if (typeof target === 'string') fail(profile, 'target_uri_malformed', target, 10)
    const authorityProblem = authorityHeaderProblem(fields, target)
    if (authorityProblem) fail(profile, 'target_uri_malformed', authorityProblem, 10)
    const parts = {
      method: message.method,
      target,
      fields,
      components: input.components,
      signatureParams: input.signatureParams,
    }
    // The base bytes, encoded into the reused buffer (node:crypto reads them during an inline call only); a
    // check that waits (thread pool, WebCrypto) gets its own copy.
    const text = composeSignatureBase(parts)!
    const written = text.length * 3 <= scratch.length ? encoder.encodeInto(text, scratch).written : -1
    const base = written >= 0 ? scratch.subarray(0, written) : encoder.encode(text)
    // Inline crypto when this is the only verification under way; the thread pool when others wait (more cores).
    const offload = options.offload === 'always' || (options.offload !== 'never' && active > 1)
    const valid = offload
      ? await verifyBytes(resolved.jwk, alg, base.slice(), signature, { offload })
      : (verifyBytesNow(resolved.jwk, alg, base, signature) ??
        (await verifyBytes(resolved.jwk, alg, base.slice(), signature)))
    if (!valid) {
      fail(profile, 'invalid', 'the signature does not verify', 10)
    }

    // 11. Content-Digest against the received bytes.
    if (
      input.components.includes('content-digest') &&
      (digest === null ||
        digest === undefined ||
        !(digestMatchesNow(digest, body) ?? (await digestMatches(digest, body))))
    ) {
      fail(profile, 'digest_mismatch', 'Content-Digest does not match the body', 11)
    }

    // 12 + 13. Replay check and insert, atomically, TTL (expires − now) + 60 s.
    if (store) {
      const outcome = await store.remember(keyid, nonce, expires + 60, cap, now)
      if (outcome === 'replayed') fail(profile, 'replayed', 'this (keyid, nonce) was already seen', 12)
      if (outcome === 'capacity') fail(profile, 'rate_abuse', `keyid "${keyid}" is at its replay cap`, 13)
    }

    // 14. Body well-formedness: JSON without duplicate object keys.
    // Received bytes in the plain case are settled in one pass; anything else takes the full check.
    if (
      options.checkBody !== false &&
      hasBody(body) &&
      (typeof body === 'string' || !isPlainJsonBytes(body))
    ) {
      checkBodyText(profile, body)
    }

    const { signer } = resolved
    const components = input.components
    return signer === undefined
      ? { keyid, algorithm: alg, label: 'sig1', components, created, expires, nonce }
      : { keyid, signer, algorithm: alg, label: 'sig1', components, created, expires, nonce }
  } finally {
    active -= 1
  }
}

/** Step 14 in full: the body decoded as UTF-8, then JSON without duplicate object keys; throws the refusal. */
function checkBodyText(profile: SignatureProfile, body: Uint8Array | string): void {
  let text: string
  try {
    text = typeof body === 'string' ? body : decoder.decode(body)
  } catch (error) {
    return fail(profile, 'body_malformed', 'the body is not UTF-8', 14, error)
  }
  const report = findDuplicateKeys(text)
  if (!report.wellFormed) fail(profile, 'body_malformed', 'the body is not well-formed JSON', 14)
  if (report.duplicates.length > 0) fail(profile, 'body_malformed', 'the body has duplicate object keys', 14)
}
