import { base64UrlByteLength, decodeBase64, decodeBase64Url } from './base64.js'
import { SignatureError } from './errors.js'
import { hasRepeatedParameter, isLoneByteSequence, parseStructuredDictionary } from './structured-fields.js'
import type { SignatureProfile } from './types.js'

/** The six AdCP signature parameters as received; absent ones are `undefined` (checklist step 2 decides). */
export interface SignatureParameters {
  readonly created?: number
  readonly expires?: number
  readonly nonce?: string
  readonly keyid?: string
  readonly alg?: string
  readonly tag?: string
}

/** The `sig1` member of a `Signature-Input` field (RFC 9421 §4.1). */
export interface SignatureInput {
  /** Covered component identifiers, in order (`@method`, `content-type`, ...). */
  readonly components: readonly string[]
  readonly params: SignatureParameters
  /** The member's value exactly as received after `sig1=`: the `@signature-params` line of the base. */
  readonly signatureParams: string
}

/** How the `Signature` value's bytes are encoded: webhook v1 and request 3.0/3.1 vs request 3.2 (AdCP notes §2.6). */
export type SignatureEncoding = 'base64url' | 'sf-binary'

/**
 * The one label AdCP processes; others are ignored (security.mdx "One signature per request").
 *
 * @example
 * `${LABEL}=:${token}:` // 'sig1=:...:'
 */
export const LABEL = 'sig1'

const STRING_PARAMS = new Set(['nonce', 'keyid', 'alg', 'tag'])
const INTEGER_PARAMS = new Set(['created', 'expires'])
const COMPONENT = /^(?:@method|@target-uri|@authority|[a-z0-9!#$%&'*+.^_`|~-]+)$/

/**
 * Parses the `sig1` member of a `Signature-Input` field: an inner list of component names with parameters
 * (RFC 9421 §4.1, RFC 8941). Returns a reason string when malformed: not a dictionary, no `sig1` or `sig1` twice,
 * not an inner list, a component that is not a string or carries parameters or repeats, a parameter given twice,
 * or `created`/`expires` not integers and `nonce`/`keyid`/`alg`/`tag` not quoted strings.
 *
 * @example
 * const input = readSignatureInput('sig1=("@method");created=1;expires=2;nonce="n";keyid="k";alg="ed25519";tag="t"')
 * typeof input !== 'string' && input.components // ['@method']
 */
export function readSignatureInput(header: string): SignatureInput | string {
  return (
    readUsualSignatureInput(header) ?? readCanonicalSignatureInput(header) ?? readAnySignatureInput(header)
  )
}

const DERIVED_NAMES = ['@method', '@target-uri', '@authority']
const PROFILE_COMPONENTS = [...DERIVED_NAMES, 'content-type', 'content-digest']

const KNOWN_VALUES = ['ed25519', 'ecdsa-p256-sha256', 'adcp/webhook-signing/v1', 'adcp/request-signing/v1']

/** An `alg` or `tag` value found at `header[start, end)` in the package's own spelling, or `undefined`. */
function knownValue(header: string, start: number, end: number): string | undefined {
  for (const value of KNOWN_VALUES) {
    if (value.length === end - start && header.startsWith(value, start)) return value
  }
  return undefined
}

/** The profile's own spelling of a component name found at `header[start, end)`: later lookups by it are quicker. */
function knownComponent(header: string, start: number, end: number): string | undefined {
  for (const name of PROFILE_COMPONENTS) {
    if (name.length === end - start && header.startsWith(name, start)) return name
  }
  return undefined
}

/**
 * The quickest path of {@link readSignatureInput}, for the exact shape AdCP signers emit: a lone `sig1`, plain
 * component names (the three derived ones or names without `@`), each covered once, and only the six profile
 * parameters, each once, integers for `created`/`expires` and plain quoted strings for the rest. Builds the
 * result without intermediate collections; `undefined` for anything else (including every malformed input),
 * which {@link readCanonicalSignatureInput} then judges. Agrees with it on every input it accepts
 * (property-tested).
 *
 * @example
 * readUsualSignatureInput('sig1=("@method");created=1;x=2') // undefined: x is not a profile parameter
 */
export function readUsualSignatureInput(header: string): SignatureInput | undefined {
  if (!header.startsWith('sig1=(')) return undefined
  const length = header.length
  const components: string[] = []
  let index = 6
  if (header.charCodeAt(index) !== 0x29) {
    for (;;) {
      if (header.charCodeAt(index) !== 0x22) return undefined
      const start = index + 1
      index = start
      let at = false
      for (; index < length; index += 1) {
        const code = header.charCodeAt(index)
        if (code === 0x40) at = true
        else if (!isComponentChar(code)) break
      }
      if (index === start || header.charCodeAt(index) !== 0x22) return undefined
      const component = knownComponent(header, start, index) ?? header.slice(start, index)
      if (at && (header.charCodeAt(start) !== 0x40 || !DERIVED_NAMES.includes(component))) return undefined
      if (components.includes(component)) return undefined
      components.push(component)
      index += 1
      const next = header.charCodeAt(index)
      if (next === 0x29) break
      if (next !== 0x20) return undefined
      index += 1
    }
  }
  index += 1
  let created: number | undefined
  let expires: number | undefined
  let nonce: string | undefined
  let keyid: string | undefined
  let alg: string | undefined
  let tag: string | undefined
  while (index < length) {
    if (header.charCodeAt(index) !== 0x3b) return undefined
    index += 1
    // One comparison a parameter, picked by its first letter.
    const letter = header.charCodeAt(index)
    const integer =
      (letter === 0x63 && header.startsWith('created=', index)) ||
      (letter === 0x65 && header.startsWith('expires=', index))
    if (integer) {
      const first = header.charCodeAt(index)
      index += 8
      const start = index
      while (index < length && isDigit(header.charCodeAt(index))) index += 1
      if (index === start || index - start > 15) return undefined
      let value = 0
      for (let digit = start; digit < index; digit += 1) value = value * 10 + header.charCodeAt(digit) - 0x30
      if (first === 0x63) {
        if (created !== undefined) return undefined
        created = value
      } else {
        if (expires !== undefined) return undefined
        expires = value
      }
      continue
    }
    let which: 0 | 1 | 2 | 3
    if (letter === 0x6e && header.startsWith('nonce="', index)) {
      which = 0
      index += 7
    } else if (letter === 0x6b && header.startsWith('keyid="', index)) {
      which = 1
      index += 7
    } else if (letter === 0x61 && header.startsWith('alg="', index)) {
      which = 2
      index += 5
    } else if (letter === 0x74 && header.startsWith('tag="', index)) {
      which = 3
      index += 5
    } else {
      return undefined
    }
    const start = index
    while (index < length && isPlainStringChar(header.charCodeAt(index))) index += 1
    if (header.charCodeAt(index) !== 0x22) return undefined
    // The allowlisted algorithms and the two profile tags as the package spells them (no copy, quicker to compare).
    const value = (which >= 2 && knownValue(header, start, index)) || header.slice(start, index)
    index += 1
    if (which === 0) {
      if (nonce !== undefined) return undefined
      nonce = value
    } else if (which === 1) {
      if (keyid !== undefined) return undefined
      keyid = value
    } else if (which === 2) {
      if (alg !== undefined) return undefined
      alg = value
    } else {
      if (tag !== undefined) return undefined
      tag = value
    }
  }
  return {
    components,
    params: { created, expires, nonce, keyid, alg, tag },
    signatureParams: header.slice(5),
  }
}

/**
 * The fast path of {@link readSignatureInput}: parses the one shape AdCP signers emit (a lone `sig1`, plain
 * component names, unescaped strings and integers) in one pass over the characters; `undefined` for anything
 * else.
 * On every input it accepts it agrees with {@link readAnySignatureInput} (property-tested).
 *
 * @example
 * readCanonicalSignatureInput('sig1=("@method");created=1') // { components: ['@method'], params: { created: 1 }, ... }
 */
export function readCanonicalSignatureInput(header: string): SignatureInput | string | undefined {
  if (!header.startsWith('sig1=(')) return undefined
  const length = header.length
  const components: string[] = []
  let index = 6
  // Components: "name" separated by single spaces, names of lower-case letters, digits, @ . _ -.
  if (header.charCodeAt(index) !== 0x29) {
    for (;;) {
      if (header.charCodeAt(index) !== 0x22) return undefined
      const start = index + 1
      index = start
      while (index < length && isComponentChar(header.charCodeAt(index))) index += 1
      if (index === start || header.charCodeAt(index) !== 0x22) return undefined
      components.push(header.slice(start, index))
      index += 1
      const next = header.charCodeAt(index)
      if (next === 0x29) break
      if (next !== 0x20) return undefined
      index += 1
    }
  }
  index += 1
  // Parameters: ;key=integer or ;key="string without quotes or backslashes".
  const params = new Map<string, string | number>()
  while (index < length) {
    if (header.charCodeAt(index) !== 0x3b) return undefined
    const keyStart = index + 1
    index = keyStart
    if (!isLowerLetter(header.charCodeAt(index))) return undefined
    while (index < length && isParamKeyChar(header.charCodeAt(index))) index += 1
    const name = header.slice(keyStart, index)
    if (header.charCodeAt(index) !== 0x3d) return undefined
    index += 1
    let value: string | number
    if (header.charCodeAt(index) === 0x22) {
      const start = index + 1
      index = start
      while (index < length && isPlainStringChar(header.charCodeAt(index))) index += 1
      if (header.charCodeAt(index) !== 0x22) return undefined
      value = header.slice(start, index)
      index += 1
    } else {
      const start = index
      while (index < length && isDigit(header.charCodeAt(index))) index += 1
      if (index === start || index - start > 15) return undefined
      value = Number(header.slice(start, index))
    }
    if (params.has(name)) return `signature parameter "${name}" appears twice`
    params.set(name, value)
  }
  return finish(components, params, header.slice(5))
}

const isLowerLetter = (code: number) => code >= 0x61 && code <= 0x7a
const isDigit = (code: number) => code >= 0x30 && code <= 0x39
const isComponentChar = (code: number) =>
  isLowerLetter(code) || isDigit(code) || code === 0x40 || code === 0x2e || code === 0x5f || code === 0x2d
const isParamKeyChar = (code: number) =>
  isLowerLetter(code) || isDigit(code) || code === 0x5f || code === 0x2e || code === 0x2a || code === 0x2d
// sf-string characters that need no escape: printable ASCII except " and \.
const isPlainStringChar = (code: number) => code >= 0x20 && code <= 0x7e && code !== 0x22 && code !== 0x5c

/**
 * The general path of {@link readSignatureInput}: any RFC 8941 dictionary, parsed with structured-headers.
 *
 * @example
 * readAnySignatureInput('relay=("@method");tag="x", sig1=("@method");created=1') // the sig1 member
 */
export function readAnySignatureInput(header: string): SignatureInput | string {
  const parsed = parseStructuredDictionary(header)
  if (!parsed) return 'Signature-Input is not a structured-field dictionary'
  const members = parsed.members.filter((member) => member.key === LABEL)
  if (members.length !== 1)
    return members.length === 0 ? 'Signature-Input has no sig1 label' : 'Signature-Input declares sig1 twice'
  const member = parsed.dictionary.get(LABEL)!
  if (!Array.isArray(member[0])) return 'sig1 is not an inner list'
  const components: string[] = []
  for (const [value, itemParams] of member[0]) {
    if (typeof value !== 'string' || itemParams.size > 0) return 'covered components must be plain strings'
    components.push(value)
  }
  const raw = members[0]!.raw
  if (hasRepeatedParameter(raw)) return 'a signature parameter appears twice'
  const params = new Map<string, string | number>()
  for (const [name, value] of member[1]) {
    if (typeof value === 'string' || typeof value === 'number') params.set(name, value)
    else if (STRING_PARAMS.has(name) || INTEGER_PARAMS.has(name))
      return `signature parameter "${name}" has the wrong type`
  }
  return finish(components, params, raw)
}

function finish(
  components: string[],
  params: ReadonlyMap<string, string | number>,
  signatureParams: string,
): SignatureInput | string {
  for (const name of STRING_PARAMS) {
    const value = params.get(name)
    if (value !== undefined && typeof value !== 'string')
      return `signature parameter "${name}" must be a quoted string`
  }
  for (const name of INTEGER_PARAMS) {
    const value = params.get(name)
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value))) {
      return `signature parameter "${name}" must be an integer`
    }
  }
  const seen = new Set<string>()
  for (const component of components) {
    if (!COMPONENT.test(component)) return `component "${component}" is not supported`
    if (seen.has(component)) return `component "${component}" is covered twice`
    seen.add(component)
  }
  // One object shape whatever the input: the six profile parameters, undefined when absent.
  const values: SignatureParameters = {
    created: params.get('created') as number | undefined,
    expires: params.get('expires') as number | undefined,
    nonce: params.get('nonce') as string | undefined,
    keyid: params.get('keyid') as string | undefined,
    alg: params.get('alg') as string | undefined,
    tag: params.get('tag') as string | undefined,
  }
  return { components, params: values, signatureParams }
}

/**
 * Decodes the `sig1` member of a `Signature` field. `base64url` (webhook v1, request 3.0/3.1) accepts only
 * unpadded base64url between the colons; `sf-binary` (request 3.2) only RFC 8941 standard base64. Neither falls
 * back to the other. Returns a reason string when malformed, `sig1` is missing or repeated, or carries parameters.
 *
 * @example
 * readSignatureValue('sig1=:AAEC:', 'base64url') // Uint8Array [0, 1, 2]
 */
export function readSignatureValue(header: string, encoding: SignatureEncoding): Uint8Array | string {
  let text: string
  const end = header.length - 1
  // The usual field, `sig1=:<base64>:`, is decoded in place; anything else takes the dictionary parser.
  if (end >= 6 && header.startsWith('sig1=:') && header.charCodeAt(end) === 0x3a) {
    const bytes = decodeSignature(header, 6, end, encoding)
    if (bytes !== undefined) return bytes
  }
  if (isLoneByteSequence(header, 'sig1=:')) {
    text = header.slice(6, -1)
  } else {
    const parsed = parseStructuredDictionary(header)
    if (!parsed) return 'Signature is not a structured-field dictionary'
    const members = parsed.members.filter((member) => member.key === LABEL)
    if (members.length !== 1)
      return members.length === 0 ? 'Signature has no sig1 label' : 'Signature declares sig1 twice'
    const item = parsed.dictionary.get(LABEL)!
    if (!(item[0] instanceof ArrayBuffer) || item[1].size > 0 || members[0]!.binaries.length !== 1) {
      return 'sig1 in Signature is not a byte sequence'
    }
    text = members[0]!.binaries[0]!
  }
  return (
    decodeSignature(text, 0, text.length, encoding) ??
    `sig1 in Signature is not ${encoding === 'base64url' ? 'unpadded base64url' : 'RFC 8941 standard base64'}`
  )
}

function decodeSignature(
  text: string,
  start: number,
  end: number,
  encoding: SignatureEncoding,
): Uint8Array | undefined {
  return encoding === 'base64url' ? decodeBase64Url(text, start, end) : decodeBase64(text, start, end)
}

/**
 * The longest nonce accepted, in characters: 128, which carries 96 bytes. The profile sets no upper bound, but
 * every nonce is written to the replay store, so an unbounded one lets a signer grow it at will; the
 * official vectors use 22 and 28 characters, and generators send 16 or 32 random bytes (22 or 43).
 */
export const MAX_NONCE_LENGTH = 128

/**
 * Whether a nonce meets the profile: unpadded base64url decoding to at least 16 bytes (security.mdx, `nonce`),
 * and at most {@link MAX_NONCE_LENGTH} characters (96 bytes).
 *
 * @example
 * isValidNonce('KXYnfEfJ0PBRZXQyVXfVQA') // true
 */
export function isValidNonce(nonce: string): boolean {
  // 22 unpadded characters carry 16 bytes; base64UrlByteLength refuses a character outside the alphabet and a
  // length of 4n + 1 (no base64 at all).
  return nonce.length >= 22 && nonce.length <= MAX_NONCE_LENGTH && base64UrlByteLength(nonce) !== undefined
}

/**
 * Parses the `sig1` member of a `Signature-Input` field, throwing `*_signature_header_malformed` for the
 * profile when it is malformed (see {@link readSignatureInput} for the rules).
 *
 * @example
 * parseSignatureInput(headers.get('signature-input')!, { profile: 'webhook' }).params.keyid
 */
export function parseSignatureInput(
  header: string,
  options: { readonly profile?: SignatureProfile } = {},
): SignatureInput {
  const result = readSignatureInput(header)
  if (typeof result === 'string')
    throw new SignatureError(`${options.profile ?? 'webhook'}_signature_header_malformed`, result, 1)
  return result
}
