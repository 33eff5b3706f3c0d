/**
 * ECDSA P-256 signatures between the IEEE P1363 `r‖s` form RFC 9421 puts on the wire (§3.3.4: 64 bytes) and
 * the DER `SEQUENCE { INTEGER r, INTEGER s }` node:crypto takes and makes by default.
 *
 * Why convert here rather than pass `{ key, dsaEncoding: 'ieee-p1363' }`: on Node.js 24 an options object
 * costs `sign` and `verify` about 50 µs a call on top of the curve arithmetic (the key argument's type checks
 * take an exception path for a plain object), more than a third of an ES256 check; a KeyObject passed as it is
 * skips them. The conversion is a few array copies. Node.js 22 and earlier pay nothing either way.
 */

/** The DER INTEGER of an unsigned big-endian number: minimal (no leading zero bytes but one before a set high bit). */
function derInteger(bytes: Uint8Array): Uint8Array {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1
  const pad = bytes[start]! & 0x80 ? 1 : 0
  const length = bytes.length - start + pad
  const out = new Uint8Array(2 + length)
  out[0] = 0x02
  out[1] = length
  out.set(bytes.subarray(start), 2 + pad)
  return out
}

/**
 * The DER form of a 64-byte P1363 P-256 signature (r and s, 32 bytes each, big-endian). One DER form for each
 * input, the minimal one, so a signature is accepted exactly when node:crypto's own P1363 decoding accepts it;
 * `r` or `s` out of range (zero, or at least the group order) fails verification there as before.
 *
 * @example
 * verify('sha256', base, publicKeyObject, p1363ToDer(signature))
 */
export function p1363ToDer(signature: Uint8Array): Uint8Array {
  if (signature.length !== 64) throw new RangeError('a P-256 P1363 signature is 64 bytes')
  const r = derInteger(signature.subarray(0, 32))
  const s = derInteger(signature.subarray(32))
  // At most 2 × 35 content bytes: the short length form always fits.
  const out = new Uint8Array(2 + r.length + s.length)
  out[0] = 0x30
  out[1] = r.length + s.length
  out.set(r, 2)
  out.set(s, 2 + r.length)
  return out
}

/** One INTEGER of a DER signature at `at`: its value bytes (big-endian, sign byte dropped) and where it ends. */
function readInteger(der: Uint8Array, at: number): { readonly value: Uint8Array; readonly end: number } {
  if (der[at] !== 0x02) throw new RangeError('not a DER ECDSA signature: INTEGER expected')
  const length = der[at + 1]
  if (length === undefined || length === 0 || length > 33 || at + 2 + length > der.length)
    throw new RangeError('not a DER ECDSA signature: bad INTEGER length')
  let value = der.subarray(at + 2, at + 2 + length)
  if (value.length === 33) {
    if (value[0] !== 0) throw new RangeError('not a P-256 signature: INTEGER longer than 32 bytes')
    value = value.subarray(1)
  }
  return { value, end: at + 2 + length }
}

/**
 * The 64-byte P1363 form (r‖s, each left-padded to 32 bytes) of a DER P-256 signature as node:crypto's `sign`
 * returns it. Throws a RangeError on anything else.
 *
 * @example
 * const wire = derToP1363(sign('sha256', base, privateKeyObject))
 */
export function derToP1363(der: Uint8Array): Uint8Array {
  if (der[0] !== 0x30 || der[1] !== der.length - 2) throw new RangeError('not a DER ECDSA signature')
  const r = readInteger(der, 2)
  const s = readInteger(der, r.end)
  if (s.end !== der.length) throw new RangeError('not a DER ECDSA signature: trailing bytes')
  const out = new Uint8Array(64)
  out.set(r.value, 32 - r.value.length)
  out.set(s.value, 64 - s.value.length)
  return out
}
