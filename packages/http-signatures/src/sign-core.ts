import { serializeString } from 'structured-headers'
import { algorithmOfJwk, keyShapeProblem, signBytes } from './algorithms.js'
import { encodeBase64, encodeBase64Url } from './base64.js'
import { authorityHeaderProblem, canonicalTarget } from './canonicalize.js'
import { createContentDigest } from './content-digest.js'
import { SignatureError } from './errors.js'
import { fail } from './failure.js'
import { headerRecord, isMultiValued, normalizeHeaders } from './headers.js'
import { composeSignatureBase } from './signature-base.js'
import { isValidNonce, type SignatureEncoding } from './signature-input.js'
import type { AdcpJwk, HttpMessage, SignatureProfile } from './types.js'

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/
const encoder = new TextEncoder()

/** Options shared by {@link signWebhook} and {@link signRequest}. */
export interface SignOptions {
  /** The private JWK (`d` present): OKP/Ed25519 or EC/P-256; its `kid` becomes `keyid`. */
  readonly key: AdcpJwk
  /** Unix seconds for `created`; default the clock. */
  readonly now?: number
  /** Seconds until `expires`, 1 to 300; default 300. */
  readonly expiresIn?: number
  /** The nonce (unpadded base64url, 16 to 96 bytes); default 16 fresh random bytes. Never reuse one. */
  readonly nonce?: string
}

/** A message as signed: the same method, URL and body, headers as a plain object with lower-cased names. */
export interface SignedMessage extends HttpMessage {
  readonly headers: Readonly<Record<string, string>>
}

/** What the profile decides about a signature. */
export interface SignPlan {
  readonly profile: SignatureProfile
  readonly tag: string
  readonly encoding: SignatureEncoding
  /** Covered components, in order; `content-digest` among them makes the signer compute the field. */
  readonly components: readonly string[]
}

/**
 * Signs a message: computes `Content-Digest` when covered, canonicalises the target URI, builds the RFC 9421
 * §2.5 base and returns the message with `Signature-Input` and `Signature` (label `sig1`) added or replaced.
 * Throws {@link SignatureError} for a key, URL, header or option the profile cannot sign with.
 *
 * @example
 * const signed = await signMessage(message, { profile: 'webhook', tag, encoding: 'base64url', components }, { key })
 */
export async function signMessage(
  message: HttpMessage,
  plan: SignPlan,
  options: SignOptions,
): Promise<SignedMessage> {
  const { profile } = plan
  options ??= {} as SignOptions
  const body = message?.body
  if (
    typeof message !== 'object' ||
    message === null ||
    (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
  ) {
    fail(profile, 'header_malformed', 'a message with a string or Uint8Array body is required', 1)
  }
  const key = options.key
  const algorithm = typeof key === 'object' && key !== null ? algorithmOfJwk(key) : undefined
  const keyProblem =
    algorithm === undefined
      ? 'the key is not an OKP/Ed25519 or EC/P-256 JWK'
      : keyShapeProblem(key, algorithm, true)
  if (keyProblem !== undefined || algorithm === undefined)
    throw new SignatureError('key_source_invalid', `cannot sign: ${keyProblem}`)
  let keyid: string
  try {
    keyid = serializeString(typeof key.kid === 'string' ? key.kid : '')
  } catch (error) {
    throw new SignatureError('key_source_invalid', 'kid must be printable ASCII', undefined, { cause: error })
  }
  const now = Math.floor(options.now ?? Date.now() / 1000)
  const expiresIn = options.expiresIn ?? 300
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 300) {
    fail(profile, 'window_invalid', 'expiresIn must be an integer from 1 to 300 seconds', 5)
  }
  const nonce = options.nonce ?? encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)))
  if (!isValidNonce(nonce))
    fail(
      profile,
      'header_malformed',
      'nonce must be unpadded base64url of 16 to 96 bytes (22 to 128 characters)',
      2,
    )

  const target = canonicalTarget(typeof message.url === 'string' ? message.url : '')
  if (typeof target === 'string') fail(profile, 'target_uri_malformed', target, 10)
  const headers = headerRecord(message.headers)
  delete headers['signature']
  delete headers['signature-input']
  if (plan.components.includes('content-digest'))
    headers['content-digest'] = await createContentDigest(message.body)
  const fields = normalizeHeaders(headers)
  const authorityProblem = authorityHeaderProblem(fields, target)
  if (authorityProblem) fail(profile, 'target_uri_malformed', authorityProblem, 10)
  for (const component of plan.components) {
    if (component.startsWith('@')) continue
    const value = headers[component]
    if (value === undefined)
      fail(profile, 'components_incomplete', `cannot cover ${component}: the header is absent`, 6)
    if (CONTROL.test(value)) fail(profile, 'header_malformed', `${component} holds control characters`, 1)
    if (component === 'content-type' && isMultiValued(value))
      fail(profile, 'header_malformed', 'Content-Type has several values', 1)
  }

  const signatureParams =
    `(${plan.components.map((component) => `"${component}"`).join(' ')})` +
    `;created=${now};expires=${now + expiresIn};nonce="${nonce}";keyid=${keyid};alg="${algorithm}";tag="${plan.tag}"`
  const base = composeSignatureBase({
    method: message.method,
    target,
    fields,
    components: plan.components,
    signatureParams,
  })!
  let signature: Uint8Array
  try {
    signature = await signBytes(key, algorithm, encoder.encode(base))
  } catch (error) {
    throw new SignatureError('key_source_invalid', 'the private key does not import', undefined, {
      cause: error,
    })
  }
  headers['signature-input'] = `sig1=${signatureParams}`
  headers['signature'] =
    `sig1=:${plan.encoding === 'base64url' ? encodeBase64Url(signature) : encodeBase64(signature)}:`
  return {
    method: message.method,
    url: message.url,
    headers,
    ...(message.body === undefined ? {} : { body: message.body }),
  }
}
