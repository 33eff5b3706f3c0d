/**
 * The per-keyid replay cap (checklist steps 9a and 13) expressed as a rate. A replay store holds each nonce
 * until `expires + 60` (step 13); a signature may be created up to 60 s ahead of the verifier's clock and
 * expire up to 300 s after its creation (step 5), so one nonce stays live at most 60 + 300 + 60 = 420 s. A
 * keyid signing `rate` messages a second therefore never holds more than `rate × 420` live nonces, whatever
 * its clock skew within the accepted window: that is the cap in entries for a rate.
 */

/** The longest a nonce of an accepted signature stays in a replay store, seconds (60 s skew + 300 s + 60 s). */
export const NONCE_HORIZON_SECONDS = 420

/** Default sustained rate per webhook signing key, messages a second (a cap of 2,100,000 live nonces). */
export const DEFAULT_WEBHOOK_NONCE_RATE = 5_000

/**
 * The per-keyid cap in live nonces that lets one keyid sustain `rate` messages a second:
 * `ceil(rate × NONCE_HORIZON_SECONDS)`. Throws a `RangeError` (code `ERR_OUT_OF_RANGE`) unless `rate` is a
 * positive finite number.
 *
 * @example
 * nonceCapForRate(5_000) // 2_100_000
 */
export function nonceCapForRate(rate: number): number {
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
    throw Object.assign(
      new RangeError(
        `a nonce rate per key must be a positive number of messages a second, not ${String(rate)}`,
      ),
      { code: 'ERR_OUT_OF_RANGE' },
    )
  }
  const cap = Math.ceil(rate * NONCE_HORIZON_SECONDS)
  if (!Number.isSafeInteger(cap)) {
    throw Object.assign(new RangeError(`a nonce rate per key of ${rate} a second is too large`), {
      code: 'ERR_OUT_OF_RANGE',
    })
  }
  return cap
}
