import { parseDictionary, type Dictionary } from 'structured-headers'

/** One member of a Structured Field Dictionary as it appears on the wire. */
export interface DictionaryMember {
  readonly key: string
  /** The member's text after `key=`, exactly as received (trailing whitespace dropped); `''` for a bare key. */
  readonly raw: string
  /** The text between the colons of each byte sequence in the member, in order, undecoded. */
  readonly binaries: readonly string[]
}

/** A dictionary parsed by structured-headers, plus what that library does not keep: order, repeats, raw text. */
export interface ParsedDictionary {
  /** Every member in wire order, repeated keys included (RFC 8941 would keep the last silently). */
  readonly members: readonly DictionaryMember[]
  /** The library's parse; byte sequences in it are empty, their text is in {@link DictionaryMember.binaries}. */
  readonly dictionary: Dictionary
}

const isKeyStart = (code: number) => (code >= 0x61 && code <= 0x7a) || code === 0x2a
const isKeyChar = (code: number) =>
  isKeyStart(code) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d || code === 0x2e

/**
 * Parses an RFC 8941 Dictionary (RFC 9421 `Signature-Input`, `Signature`; RFC 9530 `Content-Digest`) with
 * structured-headers, after one pass that records each member's raw text and repeated keys. Byte sequences
 * are taken out before the library sees them, so their alphabet is the caller's decision (AdCP sends base64url
 * where RFC 8941 expects standard base64). `undefined` when the text is not a well-formed dictionary.
 *
 * @example
 * const parsed = parseStructuredDictionary('sig1=:AAEC:, sig1=:Aw:')
 * parsed?.members.map((member) => member.key) // ['sig1', 'sig1']
 * parsed?.members[0]?.binaries // ['AAEC']
 */
export function parseStructuredDictionary(input: string): ParsedDictionary | undefined {
  const members: DictionaryMember[] = []
  const length = input.length
  let sanitized = ''
  let copied = 0
  let index = 0
  while (index < length && input.charCodeAt(index) === 0x20) index += 1
  while (index < length) {
    const keyStart = index
    if (!isKeyStart(input.charCodeAt(index))) return undefined
    while (index < length && isKeyChar(input.charCodeAt(index))) index += 1
    const key = input.slice(keyStart, index)
    let valueStart = index
    if (input.charCodeAt(index) === 0x3d) valueStart = index += 1
    const binaries: string[] = []
    let previous = input.charCodeAt(index - 1)
    while (index < length) {
      const code = input.charCodeAt(index)
      if (code === 0x2c) break
      if (code === 0x22) {
        index += 1
        let closed = false
        while (index < length) {
          const inner = input.charCodeAt(index)
          index += inner === 0x5c ? 2 : 1
          if (inner === 0x22) {
            closed = true
            break
          }
        }
        if (!closed) return undefined
      } else if (code === 0x3a && (previous === 0x3d || previous === 0x28 || previous === 0x20)) {
        const end = input.indexOf(':', index + 1)
        if (end === -1) return undefined
        binaries.push(input.slice(index + 1, end))
        sanitized += input.slice(copied, index + 1)
        copied = end
        index = end + 1
      } else {
        index += 1
      }
      previous = input.charCodeAt(index - 1)
    }
    let valueEnd = index
    while (valueEnd > valueStart && isOws(input.charCodeAt(valueEnd - 1))) valueEnd -= 1
    members.push({
      key,
      raw: valueStart === keyStart + key.length ? '' : input.slice(valueStart, valueEnd),
      binaries,
    })
    if (index < length) {
      index += 1
      while (index < length && isOws(input.charCodeAt(index))) index += 1
      if (index === length) return undefined
    }
  }
  sanitized += input.slice(copied)
  try {
    return { members, dictionary: parseDictionary(sanitized) }
  } catch {
    return undefined
  }
}

const isOws = (code: number) => code === 0x20 || code === 0x09

/**
 * Whether a member's parameters (those after the inner list, not the items' own) name any key twice: RFC 8941
 * parsers keep the last silently, AdCP requires e.g. `tag` exactly once. Looks at `;key` outside quoted strings.
 *
 * @example
 * hasRepeatedParameter('("@method");tag="a";tag="b"') // true
 */
export function hasRepeatedParameter(raw: string): boolean {
  const seen = new Set<string>()
  let quoted = false
  let depth = 0
  for (let index = 0; index < raw.length; index += 1) {
    const code = raw.charCodeAt(index)
    if (quoted) {
      if (code === 0x5c) index += 1
      else if (code === 0x22) quoted = false
    } else if (code === 0x22) quoted = true
    else if (code === 0x28) depth += 1
    else if (code === 0x29) depth -= 1
    else if (code === 0x3b && depth === 0) {
      let end = index + 1
      while (end < raw.length && raw.charCodeAt(end) === 0x20) end += 1
      const start = end
      while (end < raw.length && isKeyChar(raw.charCodeAt(end))) end += 1
      const key = raw.slice(start, end)
      if (seen.has(key)) return true
      seen.add(key)
    }
  }
  return false
}

/**
 * Whether a field value is exactly `<prefix><base64 characters>:` (a lone member holding one byte sequence,
 * its characters `A-Z a-z 0-9 + / = _ -`): such a value needs no dictionary parser.
 *
 * @example
 * isLoneByteSequence('sig1=:AAEC:', 'sig1=:') // true
 */
export function isLoneByteSequence(value: string, prefix: string): boolean {
  const end = value.length - 1
  if (end < prefix.length || !value.startsWith(prefix) || value.charCodeAt(end) !== 0x3a) return false
  for (let index = prefix.length; index < end; index += 1) {
    const code = value.charCodeAt(index)
    if (!(
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x2f && code <= 0x39) ||
      code === 0x2b ||
      code === 0x3d ||
      code === 0x5f ||
      code === 0x2d
    ))
      return false
  }
  return true
}
