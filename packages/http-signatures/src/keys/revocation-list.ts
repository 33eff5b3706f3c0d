import { SignatureError } from '../errors.js'
import type { RevocationSource, RevocationStatus } from '../types.js'
import { defaultSafeFetch, type SafeFetch } from './fetch-types.js'
import { readStrictJson } from './json-document.js'
import {
  parseRevocationList,
  readRevocationList,
  type RevocationListJson,
  type RevocationListSnapshot,
  type RevocationVerification,
} from './revocation-document.js'

/** Polling bounds of a revocation list. Durations in seconds. */
export interface RevocationTiming {
  /** Floor of the poll interval. Default 60 (security.mdx: 1 min). */
  readonly minPollSeconds?: number
  /** Ceiling of the poll interval. Default 1800 (security.mdx: 30 min). */
  readonly maxPollSeconds?: number
  /** Grace after `next_update`, in poll intervals. Default 4 (security.mdx: grace = 4 × interval). */
  readonly graceIntervals?: number
}

/** Options of {@link revocationList}: exactly one of `url` and `load`. */
export interface RevocationListOptions extends RevocationVerification, RevocationTiming {
  /** Where the list is published (the spec pins no URL for transport lists: configure it per signer). */
  readonly url?: string
  /** The fetch to use with `url`. Default: the SSRF-safe {@link createSafeFetch} with its defaults. */
  readonly fetch?: SafeFetch
  /** Instead of `url`: returns the list document, parsed or as text. */
  readonly load?: () => Promise<unknown>
  /** Clock, Unix seconds. Default: the `now` passed to `check`. */
  readonly now?: () => number
  /** Size cap of the list. Default 262144. */
  readonly maxBytes?: number
}

/** A polled revocation list. */
export interface RevocationList extends RevocationSource {
  /** Fetches the list now (sharing a fetch in flight) and returns it; throws when it cannot be read. */
  refresh(now?: number): Promise<RevocationListSnapshot>
  /** The list in use, if one was ever read. */
  current(): RevocationListSnapshot | undefined
}

/**
 * A {@link RevocationSource} over a published revocation list (AdCP 3.1 security.mdx, transport revocation;
 * webhook checklist step 9). No timers: `check` polls when the list's `next_update` has come (the interval
 * clamped to 60 s .. 30 min; a failed poll is retried after the floor), sharing one fetch among concurrent
 * checks. A kid in `revoked_kids` is `revoked` (every signature under it, before and after). The list is
 * `stale` once `now` ≥ `next_update + graceIntervals × interval`, where interval is the list's own
 * `next_update − updated`, clamped: a list that cannot be refreshed fails closed, as does never having read
 * one. A fetched list older than the one in use (`updated` going back) is refused.
 *
 * Authenticity: with `signingKeys` the list must be a flattened JWS that verifies (EdDSA/ES256); without, a
 * plain JSON list is accepted on the strength of the https connection.
 *
 * @example
 * const revocation = revocationList({ url: 'https://seller.example/.well-known/revocations.json', issuer: 'https://seller.example' })
 * await revocation.check('seller-2026-01', Math.floor(Date.now() / 1000)) // 'valid' | 'revoked' | 'stale'
 */
export function revocationList(options: RevocationListOptions): RevocationList {
  if ((options.url === undefined) === (options.load === undefined)) {
    throw new SignatureError('key_source_invalid', 'give exactly one of url and load')
  }
  const timing = resolveTiming(options)
  const fetch = options.fetch ?? defaultSafeFetch()
  let snapshot: RevocationListSnapshot | undefined
  let nextPollAt = Number.NEGATIVE_INFINITY
  let inflight: Promise<RevocationListSnapshot> | undefined

  const loadDocument = async (): Promise<unknown> => {
    if (options.load) {
      const value = await options.load()
      return typeof value === 'string' || value instanceof Uint8Array ? readStrictJson(value) : value
    }
    const response = await fetch(options.url!, { maxBytes: options.maxBytes ?? 262_144 })
    if (response.status !== 200)
      throw new SignatureError('fetch_failed', `revocation list: status ${response.status}`)
    return readStrictJson(response.body)
  }

  const refresh = (now: number): Promise<RevocationListSnapshot> => {
    inflight ??= (async () => {
      try {
        const next = await readRevocationList(await loadDocument(), options)
        if (snapshot && next.updated < snapshot.updated) {
          throw new SignatureError('key_source_invalid', 'revocation list: updated went back in time')
        }
        snapshot = next
        nextPollAt = now + clamp(next.nextUpdate - now, timing)
        return next
      } catch (error) {
        nextPollAt = now + timing.minPollSeconds
        throw error
      } finally {
        inflight = undefined
      }
    })()
    return inflight
  }

  return {
    refresh: (now) => refresh(now ?? options.now?.() ?? Math.floor(Date.now() / 1000)),
    current: () => snapshot,
    check: async (keyid, checkNow) => {
      const now = options.now?.() ?? checkNow
      if (now >= nextPollAt) {
        // A failed poll leaves the old list in place; staleness below decides whether it still counts.
        await refresh(now).catch(() => undefined)
      }
      return statusOf(snapshot, keyid, now, timing)
    },
  }
}

/**
 * A fixed revocation list, for tests, the CLI and conformance vectors (`test_harness_state.revocation_list`).
 * It goes `stale` like a real one once `next_update + grace` has passed.
 *
 * @throws {SignatureError} `key_source_invalid` when the list is malformed
 * @example
 * const revocation = staticRevocationList({ revoked_kids: ['test-revoked-2026'], updated: '2026-04-18T14:00:00Z', next_update: '2026-04-18T14:15:00Z' })
 * await revocation.check('test-revoked-2026', 1_776_520_800) // 'revoked'
 */
export function staticRevocationList(
  list: RevocationListJson,
  timing: RevocationTiming = {},
): RevocationSource {
  const snapshot = parseRevocationList(list)
  const resolved = resolveTiming(timing)
  return { check: async (keyid, now) => statusOf(snapshot, keyid, now, resolved) }
}

function resolveTiming(timing: RevocationTiming): Required<RevocationTiming> {
  const resolved = {
    minPollSeconds: timing.minPollSeconds ?? 60,
    maxPollSeconds: timing.maxPollSeconds ?? 1800,
    graceIntervals: timing.graceIntervals ?? 4,
  }
  if (!(
    resolved.minPollSeconds > 0 &&
    resolved.maxPollSeconds >= resolved.minPollSeconds &&
    resolved.graceIntervals >= 0
  )) {
    throw new SignatureError(
      'key_source_invalid',
      'revocation timing: need 0 < minPollSeconds ≤ maxPollSeconds, graceIntervals ≥ 0',
    )
  }
  return resolved
}

function clamp(seconds: number, timing: Required<RevocationTiming>): number {
  return Math.min(Math.max(seconds, timing.minPollSeconds), timing.maxPollSeconds)
}

function statusOf(
  list: RevocationListSnapshot | undefined,
  keyid: string,
  now: number,
  timing: Required<RevocationTiming>,
): RevocationStatus {
  if (list === undefined) return 'stale'
  if (list.revokedKids.has(keyid)) return 'revoked'
  const interval = clamp(list.nextUpdate - list.updated, timing)
  return now >= list.nextUpdate + timing.graceIntervals * interval ? 'stale' : 'valid'
}
