import { createHash } from 'node:crypto'
import type { ClaimRef, ClaimStore } from '@adwire/webhooks'
import canonicalize from 'canonicalize'
import { AgentError } from './errors.js'

/** The smallest and largest `replay_ttl_seconds` AdCP allows (`protocol/get-adcp-capabilities-response.json`). */
export const REPLAY_TTL_BOUNDS = { min: 3600, max: 604_800 } as const

/** Request idempotency (AdCP security.mdx §Idempotency) on a {@link ClaimStore}, namespace `request`. */
export interface IdempotencyOptions {
  readonly store: ClaimStore
  /**
   * How long a successful response is replayed, from the key's first acceptance (advertise it as
   * `adcp.idempotency.replay_ttl_seconds`): an integer from 3600 to 604,800. Default 86,400.
   */
  readonly replayTtlSeconds?: number
  /** How long one execution may run before a duplicate may take it over (at most the replay TTL). Default 300. */
  readonly leaseSeconds?: number
  /** Most live keys per principal; beyond it RATE_LIMITED. Default unlimited. */
  readonly maxKeysPerPrincipal?: number
  /**
   * How long after its replay window a key is still remembered, so that a late retry answers
   * IDEMPOTENCY_EXPIRED instead of running again as a new request. Default 604,800 (7 days); 0 forgets the
   * key with its response (a late retry then runs as new).
   */
  readonly expiryMarkerSeconds?: number
}

const isWholeNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value)

/**
 * Checks {@link IdempotencyOptions} (called by `createAgentServer`, so a bad window fails at start-up, not on
 * the first request). Throws a `RangeError` naming the option.
 *
 * @example
 * checkIdempotencyOptions({ store, replayTtlSeconds: 60 }) // RangeError: idempotency.replayTtlSeconds must be ...
 */
export function checkIdempotencyOptions(options: IdempotencyOptions): void {
  const ttl = options.replayTtlSeconds ?? 86_400
  if (!isWholeNumber(ttl) || ttl < REPLAY_TTL_BOUNDS.min || ttl > REPLAY_TTL_BOUNDS.max)
    throw new RangeError(
      `idempotency.replayTtlSeconds must be a whole number of seconds from ${REPLAY_TTL_BOUNDS.min} (1 hour) to ${REPLAY_TTL_BOUNDS.max} (7 days), as AdCP requires of replay_ttl_seconds; got ${String(options.replayTtlSeconds)}`,
    )
  const lease = options.leaseSeconds ?? 300
  if (!isWholeNumber(lease) || lease < 1 || lease > ttl)
    throw new RangeError(
      `idempotency.leaseSeconds must be a whole number of seconds from 1 to replayTtlSeconds (${ttl}); got ${String(options.leaseSeconds)}`,
    )
  const max = options.maxKeysPerPrincipal
  if (max !== undefined && (!isWholeNumber(max) || max < 1))
    throw new RangeError(
      `idempotency.maxKeysPerPrincipal must be a positive whole number; got ${String(max)}`,
    )
  const marker = options.expiryMarkerSeconds
  if (marker !== undefined && (!isWholeNumber(marker) || marker < 0))
    throw new RangeError(
      `idempotency.expiryMarkerSeconds must be a whole number of seconds, 0 or more; got ${String(marker)}`,
    )
}

/**
 * SHA-256 (hex) of the RFC 8785 canonical request, without `idempotency_key`, `context` and
 * `push_notification_config.authentication.credentials` (which may rotate between retries).
 */
export function requestFingerprint(task: string, args: Readonly<Record<string, unknown>>): string {
  const rest: Record<string, unknown> = { ...args }
  delete rest.idempotency_key
  delete rest.context
  const push = rest.push_notification_config
  if (typeof push === 'object' && push !== null) {
    const copy: Record<string, unknown> = { ...(push as Record<string, unknown>) }
    if (typeof copy.authentication === 'object' && copy.authentication !== null) {
      const authentication: Record<string, unknown> = { ...(copy.authentication as Record<string, unknown>) }
      delete authentication.credentials
      copy.authentication = authentication
    }
    rest.push_notification_config = copy
  }
  const canonical = canonicalize({ task, request: rest }) ?? ''
  return createHash('sha256').update(canonical).digest('hex')
}

/** The outcome of {@link runIdempotent}. */
export interface IdempotentResult {
  readonly response: Record<string, unknown>
  readonly replayed: boolean
}

/** Marker records live in their own scope, so they never count against `maxKeysPerPrincipal`. */
const MARKER_SCOPE_PREFIX = 'idempotency-expiry:'
const MARKER_FINGERPRINT = 'succeeded'

interface Settings {
  readonly ttl: number
  readonly lease: number
  readonly markerSeconds: number
}

const settingsOf = (options: IdempotencyOptions): Settings => ({
  ttl: options.replayTtlSeconds ?? 86_400,
  lease: options.leaseSeconds ?? 300,
  markerSeconds: options.expiryMarkerSeconds ?? 604_800,
})

const expired = () =>
  new AgentError(
    'IDEMPOTENCY_EXPIRED',
    'this idempotency_key was used before, past the replay window: its response is no longer kept',
    {
      suggestion:
        'check whether the original request succeeded (e.g. list the resources it would have created); if not, retry with a fresh idempotency_key',
    },
  )

const inFlight = (leaseExpiresAt: number, now: number) =>
  new AgentError('IDEMPOTENCY_IN_FLIGHT', 'a request with this idempotency_key is still running', {
    retryAfter: Math.min(3600, Math.max(1, Math.ceil(Math.min(5, leaseExpiresAt - now)))),
  })

/** What the expiry marker of a key says: succeeded earlier (and when), unknown, or owned by this call. */
type MarkerState =
  | { readonly kind: 'succeeded'; readonly acceptedAt: number }
  | { readonly kind: 'owned'; readonly ref: ClaimRef }
  | { readonly kind: 'unknown' }

function parseAcceptedAt(result: string | null): number | undefined {
  try {
    const value = (JSON.parse(result ?? 'null') as { accepted_at?: unknown } | null)?.accepted_at
    return typeof value === 'number' ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * Reads (and, when absent, claims) the key's expiry marker: a record kept `ttl + markerSeconds` after the
 * key's first success, holding the time of that success (never earlier than the response record's first
 * acceptance, so "past `accepted_at + ttl`" always means the response is gone).
 */
async function readMarker(
  store: ClaimStore,
  scope: string,
  key: string,
  now: number,
  settings: Settings,
): Promise<MarkerState> {
  if (settings.markerSeconds === 0) return { kind: 'unknown' }
  const markerScope = `${MARKER_SCOPE_PREFIX}${scope}`
  const result = await store.claim({
    namespace: 'request',
    scope: markerScope,
    key,
    fingerprint: MARKER_FINGERPRINT,
    now,
    leaseSeconds: settings.lease,
    retentionSeconds: settings.ttl + settings.markerSeconds,
  })
  if (result.kind === 'claimed')
    return { kind: 'owned', ref: { namespace: 'request', scope: markerScope, key, fence: result.fence } }
  if (result.kind === 'completed') {
    const acceptedAt = parseAcceptedAt(result.result)
    if (acceptedAt !== undefined) return { kind: 'succeeded', acceptedAt }
  }
  return { kind: 'unknown' }
}

/** Records the key's success in its marker (claiming the marker if another call held it meanwhile). */
async function markSucceeded(
  store: ClaimStore,
  marker: MarkerState,
  claim: { scope: string; key: string; now: number },
  settings: Settings,
): Promise<void> {
  const owned =
    marker.kind === 'owned' ? marker : await readMarker(store, claim.scope, claim.key, claim.now, settings)
  if (owned.kind === 'owned')
    await store.complete(owned.ref, claim.now, JSON.stringify({ accepted_at: claim.now }))
}

const releaseMarker = async (store: ClaimStore, marker: MarkerState): Promise<void> => {
  if (marker.kind === 'owned') await store.release(marker.ref).catch(() => undefined)
}

/**
 * Runs `execute` once per (scope, key): a completed key replays the stored response, a different request
 * under the key is IDEMPOTENCY_CONFLICT (nothing of the cached response is revealed), an execution in flight
 * is IDEMPOTENCY_IN_FLIGHT. Only successes are stored; a failure releases the key. A key that succeeded
 * before but whose replay window has passed answers IDEMPOTENCY_EXPIRED (whatever the request) for
 * `expiryMarkerSeconds` more, instead of running again as new.
 */
export async function runIdempotent(
  options: IdempotencyOptions,
  claim: { scope: string; key: string; fingerprint: string; now: number },
  execute: () => Promise<Record<string, unknown>>,
): Promise<IdempotentResult> {
  const { store } = options
  const settings = settingsOf(options)
  const marker = await readMarker(store, claim.scope, claim.key, claim.now, settings)
  if (marker.kind === 'succeeded' && claim.now >= marker.acceptedAt + settings.ttl) throw expired()
  let result: Awaited<ReturnType<ClaimStore['claim']>>
  try {
    result = await store.claim({
      namespace: 'request',
      scope: claim.scope,
      key: claim.key,
      fingerprint: claim.fingerprint,
      now: claim.now,
      leaseSeconds: settings.lease,
      retentionSeconds: settings.ttl,
      ...(options.maxKeysPerPrincipal !== undefined ? { maxPerScope: options.maxKeysPerPrincipal } : {}),
    })
  } catch (error) {
    await releaseMarker(store, marker)
    throw error
  }
  if (result.kind !== 'claimed' && result.kind !== 'completed') await releaseMarker(store, marker)
  switch (result.kind) {
    case 'completed': {
      if (result.result === null) throw new AgentError('INTERNAL_ERROR', 'the cached response is missing')
      // A marker lost to a crash between the two completions is written now (this time is later than the
      // response's acceptance, so the marker never declares a live response expired).
      if (marker.kind === 'owned') await markSucceeded(store, marker, claim, settings).catch(() => undefined)
      return { response: JSON.parse(result.result) as Record<string, unknown>, replayed: true }
    }
    case 'conflict':
      throw new AgentError(
        'IDEMPOTENCY_CONFLICT',
        'this idempotency_key was used with a different request; use a new key for a new request',
      )
    case 'processing':
      throw inFlight(result.leaseExpiresAt, claim.now)
    case 'capacity':
      throw new AgentError('RATE_LIMITED', 'too many idempotency keys in flight for this principal', {
        retryAfter: 60,
      })
    case 'claimed': {
      const ref: ClaimRef = { namespace: 'request', scope: claim.scope, key: claim.key, fence: result.fence }
      if (marker.kind === 'succeeded') {
        // The key succeeded and its completed response record is gone (a completed record is never claimable
        // while it lives): the window has passed, even if the marker's conservative time says not yet.
        await store.release(ref).catch(() => undefined)
        throw expired()
      }
      let response: Record<string, unknown>
      try {
        response = await execute()
      } catch (error) {
        await store.release(ref).catch(() => undefined)
        await releaseMarker(store, marker)
        throw error
      }
      await store.complete(ref, claim.now, JSON.stringify(response))
      await markSucceeded(store, marker, claim, settings)
      return { response, replayed: false }
    }
  }
}
