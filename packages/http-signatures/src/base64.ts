/**
 * Strict base64 codecs (RFC 4648 §4 standard and §5 URL-safe alphabets). Every decoder returns `undefined` on
 * input it does not accept, never throws, and never guesses: AdCP binds each header to one alphabet
 * (security.mdx "Binary value encoding"), so callers pick the decoder from the profile, never from the input.
 */

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

function table(alphabet: string): Int16Array {
  const values = new Int16Array(128).fill(-1)
  for (let index = 0; index < alphabet.length; index += 1) values[alphabet.charCodeAt(index)] = index
  return values
}

const STANDARD_VALUES = table(STANDARD)
const URL_SAFE_VALUES = table(URL_SAFE)

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = ''
  let index = 0
  for (; index + 2 < bytes.length; index += 3) {
    const triple = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!
    out +=
      alphabet[triple >> 18]! +
      alphabet[(triple >> 12) & 63]! +
      alphabet[(triple >> 6) & 63]! +
      alphabet[triple & 63]!
  }
  const rest = bytes.length - index
  if (rest === 1) {
    const value = bytes[index]! << 16
    out += alphabet[value >> 18]! + alphabet[(value >> 12) & 63]! + (pad ? '==' : '')
  } else if (rest === 2) {
    const value = (bytes[index]! << 16) | (bytes[index + 1]! << 8)
    out +=
      alphabet[value >> 18]! + alphabet[(value >> 12) & 63]! + alphabet[(value >> 6) & 63]! + (pad ? '=' : '')
  }
  return out
}

/**
 * Decodes unpadded base64 in one alphabet from `text[start, end)` (no slice needed); `undefined` for any other
 * character or an impossible length.
 */
function decodeUnpadded(
  text: string,
  values: Int16Array,
  start = 0,
  end = text.length,
): Uint8Array | undefined {
  const length = end - start
  if (length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((length * 3) / 4))
  const whole = end - (length % 4)
  let position = 0
  let index = start
  // Four characters, three bytes at a time.
  for (; index < whole; index += 4) {
    const a = valueOf(text.charCodeAt(index), values)
    const b = valueOf(text.charCodeAt(index + 1), values)
    const c = valueOf(text.charCodeAt(index + 2), values)
    const d = valueOf(text.charCodeAt(index + 3), values)
    if ((a | b | c | d) < 0) return undefined
    const triple = (a << 18) | (b << 12) | (c << 6) | d
    out[position] = triple >> 16
    out[position + 1] = (triple >> 8) & 0xff
    out[position + 2] = triple & 0xff
    position += 3
  }
  if (index < end) {
    // Two or three characters left: one or two bytes (the unused low bits are dropped, as before).
    const a = valueOf(text.charCodeAt(index), values)
    const b = valueOf(text.charCodeAt(index + 1), values)
    const c = index + 2 < end ? valueOf(text.charCodeAt(index + 2), values) : 0
    if ((a | b | c) < 0) return undefined
    out[position] = ((a << 2) | (b >> 4)) & 0xff
    if (index + 2 < end) out[position + 1] = (((b & 0x0f) << 4) | (c >> 2)) & 0xff
  }
  return out
}

const valueOf = (code: number, values: Int16Array) => (code < 128 ? values[code]! : -1)

/**
 * Base64url without padding (RFC 4648 §5), as AdCP sends nonces and webhook signatures.
 *
 * @example
 * encodeBase64Url(new Uint8Array([251, 255])) // '-_8'
 */
export function encodeBase64Url(bytes: Uint8Array): string {
  return encode(bytes, URL_SAFE, false)
}

/**
 * Standard base64 with padding (RFC 4648 §4), the RFC 8941 `sf-binary` form.
 *
 * @example
 * encodeBase64(new Uint8Array([251, 255])) // '+/8='
 */
export function encodeBase64(bytes: Uint8Array): string {
  return encode(bytes, STANDARD, true)
}

/**
 * Decodes unpadded base64url only: a `=`, `+` or `/` makes it `undefined`. `start` and `end` bound the encoded
 * text inside a longer string (a header value), default all of it.
 *
 * @example
 * decodeBase64Url('-_8') // Uint8Array [251, 255]
 * decodeBase64Url('+/8=') // undefined
 */
export function decodeBase64Url(text: string, start = 0, end = text.length): Uint8Array | undefined {
  return decodeUnpadded(text, URL_SAFE_VALUES, start, end)
}

/**
 * The number of bytes {@link decodeBase64Url} would return for `text`, without decoding it; `undefined` when
 * it would refuse the text.
 *
 * @example
 * base64UrlByteLength('-_8') // 2
 */
export function base64UrlByteLength(text: string): number | undefined {
  const length = text.length
  if (length % 4 === 1) return undefined
  for (let index = 0; index < length; index += 1) {
    if (valueOf(text.charCodeAt(index), URL_SAFE_VALUES) < 0) return undefined
  }
  return Math.floor((length * 3) / 4)
}

/**
 * Decodes standard-alphabet base64 (RFC 8941 `sf-binary`): padding is optional (RFC 8941 §4.2.7) but, when
 * present, must complete the last quantum; `-` or `_` makes it `undefined`. `start` and `end` bound the
 * encoded text inside a longer string, default all of it.
 *
 * @example
 * decodeBase64('+/8=') // Uint8Array [251, 255]
 * decodeBase64('-_8') // undefined
 */
export function decodeBase64(text: string, start = 0, end = text.length): Uint8Array | undefined {
  const unpadded = unpaddedEnd(text, start, end)
  return unpadded < 0 ? undefined : decodeUnpadded(text, STANDARD_VALUES, start, unpadded)
}

/**
 * Decodes either alphabet, padded or not, for `Content-Digest` values from other ecosystems (AdCP notes §2.6).
 * A value mixing the alphabets (`+` or `/` together with `-` or `_`) is ambiguous and `undefined`. `start` and
 * `end` bound the encoded text inside a longer string, default all of it.
 *
 * @example
 * decodeBase64Either('-_8=') // Uint8Array [251, 255]
 * decodeBase64Either('+_8') // undefined
 */
export function decodeBase64Either(text: string, start = 0, end = text.length): Uint8Array | undefined {
  const unpadded = unpaddedEnd(text, start, end)
  if (unpadded < 0) return undefined
  let standard = false
  let urlSafe = false
  for (let index = start; index < unpadded; index += 1) {
    const code = text.charCodeAt(index)
    if (code === 0x2b || code === 0x2f) standard = true
    else if (code === 0x2d || code === 0x5f) urlSafe = true
  }
  if (standard && urlSafe) return undefined
  return decodeUnpadded(text, standard ? STANDARD_VALUES : URL_SAFE_VALUES, start, unpadded)
}

/**
 * Where `text[start, end)` ends without its trailing `=` padding, when the padding completes the last quantum
 * exactly (at most two, total length a multiple of four); -1 otherwise. A `=` elsewhere is left to the
 * decoder, which refuses it as any character outside the alphabet.
 */
function unpaddedEnd(text: string, start: number, end: number): number {
  let first = end
  while (first > start && text.charCodeAt(first - 1) === 0x3d) first -= 1
  if (first === end) return end
  return end - first > 2 || (end - start) % 4 !== 0 ? -1 : first
}
