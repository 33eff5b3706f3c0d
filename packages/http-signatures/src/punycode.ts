/**
 * Punycode (RFC 3492) decoding of one A-label's tail, for checking A-labels without depending on the URL
 * parser of the runtime: since Node 24.21 (ada 3) `new URL()` accepts `xn--` labels that decode to nothing
 * valid, so the target-URI canonicalizer decodes them itself and sends the Unicode form back through the URL
 * Standard's ToASCII, which still validates it. Web-standard; no `node:punycode`.
 */
const BASE = 36
const T_MIN = 1
const T_MAX = 26
const SKEW = 38
const DAMP = 700
const INITIAL_BIAS = 72
const INITIAL_N = 128
const MAX_CODE_POINT = 0x10ffff

function digitOf(code: number): number | undefined {
  if (code >= 0x30 && code <= 0x39) return code - 0x30 + 26 // 0-9
  if (code >= 0x41 && code <= 0x5a) return code - 0x41 // A-Z
  if (code >= 0x61 && code <= 0x7a) return code - 0x61 // a-z
  return undefined
}

function adapt(delta: number, points: number, first: boolean): number {
  let scaled = first ? Math.floor(delta / DAMP) : delta >> 1
  scaled += Math.floor(scaled / points)
  let k = 0
  while (scaled > ((BASE - T_MIN) * T_MAX) >> 1) {
    scaled = Math.floor(scaled / (BASE - T_MIN))
    k += BASE
  }
  return k + Math.floor(((BASE - T_MIN + 1) * scaled) / (scaled + SKEW))
}

/**
 * Decodes the Punycode text after `xn--` (`bcher-kva` → `bücher`), or `undefined` when it is not valid
 * Punycode (a non-basic character, a bad digit, a truncated number, an overflow, a code point out of range).
 *
 * @example
 * decodePunycode('bcher-kva') // 'bücher'
 * decodePunycode('a') // '\u0080' (valid Punycode; IDNA refuses it, which the URL parser's ToASCII then checks)
 */
export function decodePunycode(input: string): string | undefined {
  const output: number[] = []
  const delimiter = input.lastIndexOf('-')
  const basicLength = delimiter < 0 ? 0 : delimiter
  for (let j = 0; j < basicLength; j += 1) {
    const code = input.charCodeAt(j)
    if (code >= 0x80) return undefined
    output.push(code)
  }
  let i = 0
  let n = INITIAL_N
  let bias = INITIAL_BIAS
  let index = basicLength > 0 ? basicLength + 1 : 0
  while (index < input.length) {
    const previous = i
    let weight = 1
    for (let k = BASE; ; k += BASE) {
      if (index >= input.length) return undefined
      const digit = digitOf(input.charCodeAt(index))
      index += 1
      if (digit === undefined) return undefined
      i += digit * weight
      if (i > MAX_CODE_POINT * (output.length + 1)) return undefined
      const threshold = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias
      if (digit < threshold) break
      weight *= BASE - threshold
    }
    bias = adapt(i - previous, output.length + 1, previous === 0)
    n += Math.floor(i / (output.length + 1))
    i %= output.length + 1
    if (n > MAX_CODE_POINT) return undefined
    output.splice(i, 0, n)
    i += 1
  }
  return String.fromCodePoint(...output)
}
