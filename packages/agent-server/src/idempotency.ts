import { createHash } from 'node:crypto'
import type { ClaimRef, ClaimStore } from '@adwire/webhooks'
import canonicalize from 'canonicalize'
import { AgentError } from './errors.js'

/** Request idempotency (AdCP security.mdx §Idempotency) on a {@link ClaimStore}, namespace `request`. */
export interface IdempotencyOptions {
  readonly store: ClaimStore
  /** How long a successful response is replayed (advertise it as `adcp.idempotency.replay_ttl_seconds`, ≥ 3600). Default 86,400. */
  readonly replayTtlSeconds?: number
  /** How long one execution may run before a duplicate may take it over. Default 300. */
  readonly leaseSeconds?: number
  /** Most live keys per principal; beyond it RATE_LIMITED. Default unlimited. */
  readonly maxKeysPerPrincipal?: number
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

/**
 * Runs `execute` once per (scope, key): a completed key replays the stored response, a different request
 * under the key is IDEMPOTENCY_CONFLICT (nothing of the cached response is revealed), an execution in flight
 * is IDEMPOTENCY_IN_FLIGHT. Only successes are stored; a failure releases the key.
 */
export async function runIdempotent(
  options: IdempotencyOptions,
  claim: { scope: string; key: string; fingerprint: string; now: number },
  execute: () => Promise<Record<string, unknown>>,
): Promise<IdempotentResult> {
  const result = await options.store.claim({
    namespace: 'request',
    scope: claim.scope,
    key: claim.key,
    fingerprint: claim.fingerprint,
    now: claim.now,
    leaseSeconds: options.leaseSeconds ?? 300,
    retentionSeconds: options.replayTtlSeconds ?? 86_400,
    ...(options.maxKeysPerPrincipal !== undefined ? { maxPerScope: options.maxKeysPerPrincipal } : {}),
  })
  switch (result.kind) {
    case 'completed': {
      if (result.result === null) throw new AgentError('INTERNAL_ERROR', 'the cached response is missing')
      return { response: JSON.parse(result.result) as Record<string, unknown>, replayed: true }
    }
    case 'conflict':
      throw new AgentError(
        'IDEMPOTENCY_CONFLICT',
        'this idempotency_key was used with a different request; use a new key for a new request',
      )
    case 'processing':
      throw new AgentError('IDEMPOTENCY_IN_FLIGHT', 'a request with this idempotency_key is still running', {
        retryAfter: Math.min(3600, Math.max(1, Math.ceil(Math.min(5, result.leaseExpiresAt - claim.now)))),
      })
    case 'capacity':
      throw new AgentError('RATE_LIMITED', 'too many idempotency keys in flight for this principal', {
        retryAfter: 60,
      })
    case 'claimed': {
      const ref: ClaimRef = { namespace: 'request', scope: claim.scope, key: claim.key, fence: result.fence }
      let response: Record<string, unknown>
      try {
        response = await execute()
      } catch (error) {
        await options.store.release(ref).catch(() => undefined)
        throw error
      }
      await options.store.complete(ref, claim.now, JSON.stringify(response))
      return { response, replayed: false }
    }
  }
}
