import { isAllowedAlgorithm } from './algorithms.js'
import { hasNonAsciiAuthority } from './canonicalize.js'
import { readSha256Digest } from './content-digest.js'
import { hasBody } from './crypto-backend.js'
import { fail } from './failure.js'
import { fieldValue, hasControlCharacter, isMultiValued, type HeaderFields } from './headers.js'
import {
  isValidNonce,
  readSignatureInput,
  readSignatureValue,
  type SignatureInput,
} from './signature-input.js'
import type { HttpMessage, SignatureAlgorithm } from './types.js'
import type { ProfileRules } from './verify-core.js'

/** What checklist steps 1 to 6 established about a received message, for the steps that follow. */
export interface ReceivedSignature {
  readonly input: SignatureInput
  /** The six parameters, all present and well-formed. */
  readonly params: {
    readonly created: number
    readonly expires: number
    readonly nonce: string
    readonly keyid: string
    readonly alg: SignatureAlgorithm
    readonly tag: string
  }
  readonly signature: Uint8Array
  /** The `sha-256` digest of `Content-Digest` when covered (`null` when the field names none). */
  readonly digest: Uint8Array | null | undefined
  readonly body: Uint8Array | string | null | undefined
  readonly withBody: boolean
}

const DERIVED = new Set(['@method', '@target-uri', '@authority'])
const REQUIRED_PARAMS = ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'] as const

/**
 * Checklist steps 1 to 6 (security.mdx), synchronously and in order, throwing the profile's wire code at the
 * first failure: parse `Signature-Input` and `Signature` and the covered fields (1), all six parameters and
 * the nonce (2), tag (3), algorithm allowlist (4), window (5), covered components (6).
 *
 * @example
 * const { params, signature } = readSignedMessage(message, WEBHOOK_RULES, normalizeHeaders(message.headers), now)
 */
export function readSignedMessage(
  message: HttpMessage,
  rules: ProfileRules,
  fields: HeaderFields,
  now: number,
): ReceivedSignature {
  const { profile } = rules
  // 1. Parse Signature-Input and Signature (a bound pair), and what the base will need from the message.
  const inputHeader = fieldValue(fields, 'signature-input')
  const signatureHeader = fieldValue(fields, 'signature')
  if (inputHeader === undefined || signatureHeader === undefined) {
    fail(profile, 'header_malformed', 'Signature and Signature-Input must be sent together', 1)
  }
  const input = readSignatureInput(inputHeader)
  if (typeof input === 'string') fail(profile, 'header_malformed', input, 1)
  const signature = readSignatureValue(signatureHeader, rules.encoding)
  if (typeof signature === 'string') fail(profile, 'header_malformed', signature, 1)
  if (typeof message.url !== 'string' || hasNonAsciiAuthority(message.url)) {
    fail(profile, 'header_malformed', 'the URL authority holds raw non-ASCII characters; send the A-label', 1)
  }
  let digest: Uint8Array | null | undefined
  for (const component of input.components) {
    if (DERIVED.has(component)) continue
    if (component.startsWith('@'))
      fail(profile, 'header_malformed', `derived component ${component} is not supported`, 1)
    const value = fieldValue(fields, component)
    if (value === undefined) fail(profile, 'header_malformed', `covered field ${component} is absent`, 1)
    if (hasControlCharacter(value))
      fail(profile, 'header_malformed', `covered field ${component} holds control characters`, 1)
    if (component === 'content-type' && isMultiValued(value))
      fail(profile, 'header_malformed', 'Content-Type has several values', 1)
    if (component === 'content-digest') {
      digest = readSha256Digest(value)
      if (digest === undefined) fail(profile, 'header_malformed', 'Content-Digest is malformed', 1)
    }
  }

  // 2. All six parameters present; the nonce well-formed.
  const { params } = input
  for (const name of REQUIRED_PARAMS) {
    if (params[name] === undefined)
      fail(profile, 'params_incomplete', `signature parameter ${name} is missing`, 2)
  }
  const { created, expires, nonce, alg, tag } = params as Required<typeof params>
  if (!isValidNonce(nonce))
    fail(
      profile,
      'header_malformed',
      'nonce must be unpadded base64url of 16 to 96 bytes (22 to 128 characters)',
      2,
    )

  // 3. Tag, byte for byte. 4. Algorithm allowlist. 5. Window (±60 s skew, at most 300 s).
  if (tag !== rules.tag) fail(profile, 'tag_invalid', `tag must be ${rules.tag}`, 3)
  if (!isAllowedAlgorithm(alg))
    fail(profile, 'alg_not_allowed', `alg "${alg}" is not ed25519 or ecdsa-p256-sha256`, 4)
  if (expires <= created || created > now + 60 || expires < now - 60 || expires - created > 300) {
    fail(profile, 'window_invalid', 'created/expires are outside the allowed window', 5)
  }

  // 6. Covered components.
  const body = message.body
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    fail(profile, 'header_malformed', 'the body must be the raw bytes (Uint8Array) or their string', 6)
  }
  const withBody = hasBody(body)
  const covered = input.components
  const componentsProblem = rules.componentsProblem(covered, withBody)
  if (componentsProblem) fail(profile, componentsProblem.kind, componentsProblem.message, 6)

  return {
    input,
    params: params as ReceivedSignature['params'],
    signature,
    digest,
    body,
    withBody,
  }
}
