import type { HeaderInput } from './types.js'

/**
 * Header fields by lower-cased name, each with its values in the order received. Built once per message so
 * every later lookup is a map read.
 */
export type HeaderFields = ReadonlyMap<string, readonly string[]>

/**
 * Reads a {@link HeaderInput} (WHATWG `Headers` or a plain object with names in any case, values a string or
 * a list) into {@link HeaderFields}. Undefined values are skipped; a name given twice in different cases keeps
 * both values. HTTP/2 pseudo-headers such as `:authority` pass through under their own name.
 *
 * @example
 * normalizeHeaders({ 'Content-Type': 'application/json' }).get('content-type') // ['application/json']
 */
export function normalizeHeaders(input: HeaderInput): HeaderFields {
  const fields = new Map<string, string[]>()
  if (typeof input !== 'object' || input === null) return fields
  if (isHeaders(input)) {
    // WHATWG Headers already joins repeated fields with ", "; Set-Cookie is irrelevant to signatures.
    for (const [name, value] of input) addField(fields, name, value)
    return fields
  }
  for (const name in input) {
    if (!Object.prototype.hasOwnProperty.call(input, name)) continue
    const value = input[name]
    if (typeof value === 'string') addField(fields, name, value)
    else if (Array.isArray(value))
      for (const item of value as readonly unknown[])
        if (typeof item === 'string') addField(fields, name, item)
  }
  return fields
}

function addField(fields: Map<string, string[]>, name: string, value: string): void {
  const key = isLowerCase(name) ? name : name.toLowerCase()
  const values = fields.get(key)
  if (values) values.push(value)
  else fields.set(key, [value])
}

/** Whether a name has no upper-case ASCII letter and no non-ASCII character (lower-casing would not change it). */
function isLowerCase(name: string): boolean {
  for (let index = 0; index < name.length; index += 1) {
    const code = name.charCodeAt(index)
    if ((code >= 0x41 && code <= 0x5a) || code > 0x7f) return false
  }
  return true
}

function isHeaders(input: HeaderInput): input is Headers {
  return typeof (input as Headers).forEach === 'function' && typeof (input as Headers).get === 'function'
}

/**
 * The field value as RFC 9421 §2.1 covers it: values in order, each trimmed of surrounding whitespace, joined
 * with `", "`; `undefined` when the field is absent.
 *
 * @example
 * fieldValue(normalizeHeaders({ 'X-A': ['1', ' 2 '] }), 'x-a') // '1, 2'
 */
export function fieldValue(fields: HeaderFields, name: string): string | undefined {
  const values = fields.get(name)
  if (values === undefined) return undefined
  if (values.length === 1) return values[0]!.trim()
  return values.map((value) => value.trim()).join(', ')
}

/**
 * Whether a singleton field value (such as `Content-Type`) actually carries several values: a comma outside
 * a quoted string (RFC 9110 §5.3 list syntax). `application/json, text/plain` is; `multipart/form-data;
 * boundary="a,b"` is not.
 *
 * @example
 * isMultiValued('application/json, text/plain') // true
 */
export function isMultiValued(value: string): boolean {
  let quoted = false
  for (let index = 0; index < value.length; index += 1) {
    const char = value.charCodeAt(index)
    if (quoted) {
      if (char === 0x5c) index += 1
      else if (char === 0x22) quoted = false
    } else if (char === 0x22) quoted = true
    else if (char === 0x2c) return true
  }
  return false
}

/**
 * A copy of the headers as a plain object with lower-cased names, for a message the signer returns; values
 * given as lists are joined with `", "`.
 *
 * @example
 * headerRecord({ 'Content-Type': 'application/json' }) // { 'content-type': 'application/json' }
 */
export function headerRecord(input: HeaderInput): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, values] of normalizeHeaders(input)) out[name] = values.join(', ')
  return out
}

/**
 * Whether a field value holds a control character other than HTAB (U+0000 to U+001F, U+007F), which a
 * covered field may not carry (the signer and the verifier could read it differently).
 *
 * @example
 * hasControlCharacter('application/json\u0000') // true
 */
export function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true
  }
  return false
}
