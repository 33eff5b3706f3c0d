import { canonicalTarget, type CanonicalTarget } from './canonicalize.js'
import { SignatureError } from './errors.js'
import { fieldValue, normalizeHeaders, type HeaderFields } from './headers.js'
import { readSignatureInput } from './signature-input.js'
import type { HttpMessage, SignatureProfile } from './types.js'

/** What an RFC 9421 §2.5 signature base is built from, everything already canonical. */
export interface SignatureBaseParts {
  readonly method: string
  readonly target: CanonicalTarget
  readonly fields: HeaderFields
  /** Covered components in `Signature-Input` order. */
  readonly components: readonly string[]
  /** The `@signature-params` value exactly as serialised in `Signature-Input` after `sig1=`. */
  readonly signatureParams: string
}

/**
 * The value a covered component contributes (RFC 9421 §2.1, §2.2): `@method` upper-cased, canonical
 * `@target-uri` and `@authority`, a header field's values trimmed and joined with `", "`; `undefined` when a
 * covered field is absent.
 *
 * @example
 * componentValue('@method', parts) // 'POST'
 */
export function componentValue(
  component: string,
  parts: Omit<SignatureBaseParts, 'components' | 'signatureParams'>,
): string | undefined {
  switch (component) {
    case '@method':
      return String(parts.method).toUpperCase()
    case '@target-uri':
      return parts.target.targetUri
    case '@authority':
      return parts.target.authority
    default:
      return fieldValue(parts.fields, component)
  }
}

/**
 * Joins the signature base lines (RFC 9421 §2.5): `"<component>": <value>` per covered component in order,
 * then `"@signature-params": <value>`, separated by a single LF with no trailing newline. Returns `undefined`
 * when a covered header field is absent.
 *
 * @example
 * composeSignatureBase({ method: 'POST', target, fields, components: ['@method'], signatureParams: '("@method")' })
 * // '"@method": POST\n"@signature-params": ("@method")'
 */
export function composeSignatureBase(parts: SignatureBaseParts): string | undefined {
  let base = ''
  for (const component of parts.components) {
    const value = componentValue(component, parts)
    if (value === undefined) return undefined
    base += `"${component}": ${value}\n`
  }
  return `${base}"@signature-params": ${parts.signatureParams}`
}

/**
 * The signature base a verifier computes for a received message, from its `Signature-Input` (`sig1` only), its
 * URL canonicalised per the AdCP profile, and its headers. For `adwire explain` and for checking a signer: the
 * conformance vectors' `expected_signature_base` is reproduced byte for byte.
 *
 * Throws `*_signature_header_malformed` for a missing or malformed `Signature-Input` or an absent covered field,
 * and `*_target_uri_malformed` for a URL that cannot be canonicalised (`profile` picks the prefix; default webhook).
 *
 * @example
 * const base = buildSignatureBase({ method: 'POST', url, headers, body }, { profile: 'webhook' })
 */
export function buildSignatureBase(
  message: HttpMessage,
  options: { readonly profile?: SignatureProfile } = {},
): string {
  const profile = options.profile ?? 'webhook'
  const fields = normalizeHeaders(message.headers)
  const header = fieldValue(fields, 'signature-input')
  if (header === undefined)
    throw new SignatureError(`${profile}_signature_header_malformed`, 'no Signature-Input header', 1)
  const input = readSignatureInput(header)
  if (typeof input === 'string') throw new SignatureError(`${profile}_signature_header_malformed`, input, 1)
  const target = canonicalTarget(message.url)
  if (typeof target === 'string') throw new SignatureError(`${profile}_target_uri_malformed`, target, 10)
  const base = composeSignatureBase({ method: message.method, target, fields, ...input })
  if (base === undefined)
    throw new SignatureError(`${profile}_signature_header_malformed`, 'a covered header field is absent', 1)
  return base
}
