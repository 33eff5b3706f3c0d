const encoder = new TextEncoder()
/** What WebCrypto takes as data, spelled without DOM types. */
type Bytes = Parameters<typeof crypto.subtle.digest>[1]

const toBytes = (value: string | Uint8Array) => (typeof value === 'string' ? encoder.encode(value) : value)

/**
 * Compares two secrets without leaking where they differ or how long either is: both are hashed with
 * SHA-256 and the digests compared with a loop that always runs to the end.
 *
 * @example
 * if (!(await constantTimeEqual(payload.token, registration.token))) reject()
 */
export async function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): Promise<boolean> {
  const [left, right] = await Promise.all([
    crypto.subtle.digest('SHA-256', toBytes(a) as Bytes),
    crypto.subtle.digest('SHA-256', toBytes(b) as Bytes),
  ])
  const x = new Uint8Array(left)
  const y = new Uint8Array(right)
  let difference = 0
  for (let index = 0; index < x.length; index += 1) difference |= x[index]! ^ y[index]!
  return difference === 0
}
