/**
 * What an attempt's result means for the delivery (AdCP webhooks.mdx "Reliability" and "Recovery"): 2xx
 * delivered; 5xx, 429, a network error or a timeout retried with exponential back-off and jitter within the
 * advertised horizon; a 401 is a transient receiver misconfiguration (a token rotated, a JWKS not refreshed,
 * a clock off): retried the same way and recorded, with the `webhook_*` code of a `WWW-Authenticate:
 * Signature` challenge in the activity row; the destination stays enabled. 409 (the receiver bound the key to
 * another payload) is terminal for that delivery; every other status is a failure.
 *
 * The webhook error taxonomy of security.mdx calls the `webhook_*` codes non-retryable; the media-buy
 * recovery rule (a fire answered 401: retry, record, never disable) wins here, since a buyer whose receiver
 * is fixed within the horizon gets the push instead of losing it; every retry is signed anew.
 */
import type { ActivityStatus, AttemptOutcome } from '../stores.js'
import type { RetryPolicy } from './options.js'

/** How one attempt ended, before the policy decides what follows. */
export type AttemptResult =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Headers; readonly code?: string }
  | { readonly kind: 'timeout'; readonly message: string }
  | { readonly kind: 'connection_error'; readonly message: string }
  | { readonly kind: 'local_error'; readonly message: string }

/**
 * The back-off before retry number `attempt` (1 for the first retry): base × 2^(attempt−1), capped, then
 * reduced by up to `jitter` of itself at random.
 *
 * @example
 * backoffSeconds(3, { baseDelaySeconds: 2, maxDelaySeconds: 900, jitter: 0 }, Math.random) // 8
 */
export function backoffSeconds(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseDelaySeconds' | 'maxDelaySeconds' | 'jitter'>,
  random: () => number,
): number {
  const exponential = Math.min(
    policy.maxDelaySeconds,
    policy.baseDelaySeconds * 2 ** Math.max(0, attempt - 1),
  )
  return exponential * (1 - policy.jitter * Math.min(Math.max(random(), 0), 1))
}

/**
 * Reads `Retry-After` (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) as seconds from `now`; undefined when
 * absent or unreadable.
 *
 * @example
 * parseRetryAfter('120', 0) // 120
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date / 1000 - now)
}

/** The `error` parameter of `WWW-Authenticate: Signature error="webhook_…"`, when present. */
export function signatureErrorCode(headers: Headers): string | undefined {
  const header = headers.get('www-authenticate')
  if (!header || !/^\s*Signature\b/i.test(header)) return undefined
  return /\berror="?(webhook_[a-z_]+)"?/.exec(header)?.[1]
}

const MIN_DELAY_SECONDS = 0.001

interface Decision {
  readonly retry: boolean
  readonly activityStatus: ActivityStatus
  readonly error: string
  readonly httpStatus?: number
  readonly retryAfter?: number
}

function decide(result: AttemptResult, now: number): Decision | 'delivered' {
  if (result.kind === 'timeout' || result.kind === 'connection_error')
    return { retry: true, activityStatus: result.kind, error: result.message }
  if (result.kind === 'local_error') return { retry: true, activityStatus: 'failed', error: result.message }
  const { status, headers } = result
  if (status >= 200 && status < 300) return 'delivered'
  const detail = result.code ? `HTTP ${status}: ${result.code}` : `HTTP ${status}`
  const base = { activityStatus: 'failed' as const, httpStatus: status }
  if (status === 401) {
    const code = signatureErrorCode(headers)
    const what = code ? `HTTP 401: ${code}` : detail
    return { ...base, retry: true, error: `${what} (treated as a transient receiver misconfiguration)` }
  }
  if (status === 409)
    return {
      ...base,
      retry: false,
      error: `${detail} (the receiver bound this key to another payload; not retried)`,
    }
  if (status === 429 || status >= 500) {
    const retryAfter = parseRetryAfter(headers.get('retry-after'), now)
    return { ...base, retry: true, error: detail, ...(retryAfter !== undefined ? { retryAfter } : {}) }
  }
  return { ...base, retry: false, error: `${detail} (not retried)` }
}

/**
 * The outcome to record for an attempt: delivered, a retry at `nextAttemptAt` (the back-off, or a later
 * `Retry-After` up to its cap; never past the deadline), or failed.
 *
 * @example
 * const outcome = outcomeOf(result, { now, attempt: entry.attempts + 1, deadlineAt: entry.deadlineAt, policy, random })
 * await outbox.record(entry.id, entry.fence, outcome, now)
 */
export function outcomeOf(
  result: AttemptResult,
  context: {
    readonly now: number
    readonly attempt: number
    readonly deadlineAt: number
    readonly policy: RetryPolicy
    readonly random: () => number
  },
): AttemptOutcome {
  const decision = decide(result, context.now)
  if (decision === 'delivered')
    return { kind: 'delivered', httpStatus: (result as { status: number }).status }
  const common = {
    activityStatus: decision.activityStatus,
    ...(decision.httpStatus !== undefined ? { httpStatus: decision.httpStatus } : {}),
  }
  if (!decision.retry) return { kind: 'failed', ...common, error: decision.error }
  if (context.now >= context.deadlineAt)
    return { kind: 'failed', ...common, error: `${decision.error}; retry horizon reached, giving up` }
  const backoff = backoffSeconds(context.attempt, context.policy, context.random)
  const requested = Math.min(decision.retryAfter ?? 0, context.policy.maxRetryAfterSeconds)
  // Strictly later than now, so that a drain at a fixed time never attempts an entry twice.
  const delay = Math.max(backoff, requested, MIN_DELAY_SECONDS)
  const nextAttemptAt = Math.min(context.now + delay, context.deadlineAt)
  return { kind: 'retry', ...common, error: decision.error, nextAttemptAt }
}
