/**
 * Identifiers: UUIDv7 (RFC 9562 §5.7) for feed events, monotonic within the process so that ordering by
 * `event_id` is ordering by creation even within one millisecond; random UUIDs elsewhere.
 */
import { randomBytes, randomUUID } from 'node:crypto'

let lastMs = 0
let sequence = 0

/**
 * A new UUIDv7: 48 bits of Unix milliseconds, version 7, a 12-bit counter that increases within one
 * millisecond (so ids from this process sort in creation order), variant bits, 62 random bits.
 *
 * @example
 * uuidv7() // '01990f4e-8c3a-7000-9a1b-3c5d7e9f0a1b'
 */
export function uuidv7(now: number = Date.now()): string {
  let ms = Math.max(now, lastMs)
  if (ms === lastMs) {
    sequence += 1
    if (sequence > 0xfff) {
      ms += 1
      sequence = 0
    }
  } else sequence = 0
  lastMs = ms
  const bytes = randomBytes(16)
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = 0x70 | (sequence >> 8)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * A new UUIDv7 that sorts strictly after `floor` (the greatest id already stored), even when this machine's
 * clock is behind the one that made `floor`: the generator's (millisecond, counter) state is first raised to
 * `floor`'s, so the id is then `floor`'s millisecond with the next counter value (or the next millisecond when
 * the counter is spent). Later ids of this process keep sorting after it. Without a floor it is {@link uuidv7}.
 *
 * @example
 * uuidv7After('01990f4e-8c3a-7005-9a1b-3c5d7e9f0a1b', 0) // '01990f4e-8c3a-7006-…'
 */
export function uuidv7After(floor: string | undefined, now: number = Date.now()): string {
  if (floor !== undefined) raiseTo(floor)
  return uuidv7(now)
}

/** Raises the (millisecond, counter) state so that the next {@link uuidv7} sorts after `floor`. */
function raiseTo(floor: string): void {
  const hex = floor.replaceAll('-', '').toLowerCase()
  const floorMs = Number.parseInt(hex.slice(0, 12), 16)
  if (!/^[0-9a-f]{32}$/.test(hex) || !Number.isSafeInteger(floorMs)) return
  // A version-7 floor has its counter in the 12 bits after the version nibble; a floor of a higher version
  // sorts after every version-7 id of its millisecond, so the next id must move to the next millisecond.
  const version = Number.parseInt(hex[12]!, 16)
  const floorSequence = version === 7 ? Number.parseInt(hex.slice(13, 16), 16) : version > 7 ? 0xfff : -1
  if (floorMs > lastMs || (floorMs === lastMs && floorSequence > sequence)) {
    lastMs = floorMs
    sequence = floorSequence
  }
}

/** A random (v4) UUID. */
export const newId = (): string => randomUUID()

/** Any RFC 9562 UUID, lowercase or uppercase. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
