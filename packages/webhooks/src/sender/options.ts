import { WebhookError } from '../errors.js'
import type { A2AVersion, CoalesceClass, WebhookSenderOptions } from './types.js'

/** The retry policy with every default applied. */
export interface RetryPolicy {
  readonly horizonSeconds: number
  readonly baseDelaySeconds: number
  readonly maxDelaySeconds: number
  readonly jitter: number
  readonly maxRetryAfterSeconds: number
}

/** Options with every default applied and checked. */
export interface ResolvedSenderOptions {
  readonly fetch: typeof fetch
  readonly now: () => number
  readonly random: () => number
  readonly retry: RetryPolicy
  readonly coalesce: ReadonlyMap<string, CoalesceClass>
  readonly concurrency: number
  readonly leaseSeconds: number
  readonly timeoutMs: number
  readonly pollIntervalMs: number
  readonly a2aVersion: A2AVersion
  readonly refuseBearerForMutatingTasks: boolean
}

/**
 * The AdCP defaults (webhooks.mdx "Coalescence"): general impairments SHOULD NOT wait more than 5 minutes;
 * latency-sensitive ones (fraud, brand safety) get a sub-minute window or none, never the general default.
 *
 * @example
 * createWebhookSender({ outbox, key, coalesce: { impairment: { windowSeconds: 60, maxDelaySeconds: 300 } } })
 * DEFAULT_COALESCE_CLASSES['latency-sensitive'] // { windowSeconds: 0, maxDelaySeconds: 0 }
 */
export const DEFAULT_COALESCE_CLASSES: Readonly<Record<string, CoalesceClass>> = {
  impairment: { windowSeconds: 300, maxDelaySeconds: 300 },
  'latency-sensitive': { windowSeconds: 0, maxDelaySeconds: 0 },
}

/** The most a built-in class may wait without the receiver's declared opt-in (exclusive for latency-sensitive). */
const CEILINGS: Readonly<Record<string, { seconds: number; inclusive: boolean }>> = {
  impairment: { seconds: 300, inclusive: true },
  'latency-sensitive': { seconds: 60, inclusive: false },
}

const invalid = (message: string) => new WebhookError('webhook_sender_options_invalid', message)

function number(value: number | undefined, fallback: number, name: string, check: (n: number) => boolean) {
  const result = value ?? fallback
  if (typeof result !== 'number' || !Number.isFinite(result) || !check(result))
    throw invalid(`${name} is out of range: ${String(value)}`)
  return result
}

function resolveCoalesce(input: WebhookSenderOptions['coalesce']): Map<string, CoalesceClass> {
  const classes = new Map(Object.entries({ ...DEFAULT_COALESCE_CLASSES, ...input }))
  for (const [name, value] of classes) {
    const window = value?.windowSeconds
    const max = value?.maxDelaySeconds
    if (typeof window !== 'number' || typeof max !== 'number' || !(window >= 0) || !(max >= 0))
      throw invalid(`coalesce class "${name}" needs windowSeconds and maxDelaySeconds ≥ 0`)
    if (!Number.isFinite(window) || !Number.isFinite(max) || window > max)
      throw invalid(`coalesce class "${name}": windowSeconds (${window}) exceeds maxDelaySeconds (${max})`)
    const ceiling = CEILINGS[name]
    const over = ceiling && (ceiling.inclusive ? max > ceiling.seconds : max >= ceiling.seconds)
    if (over && value.receiverOptIn !== true)
      throw invalid(
        `coalesce class "${name}" may not wait ${max} s without the receiver's declared opt-in (AdCP limit ${ceiling.inclusive ? '' : 'under '}${ceiling.seconds} s)`,
      )
  }
  return classes
}

/**
 * Applies the defaults of {@link WebhookSenderOptions} and refuses combinations that cannot work (a lease no
 * longer than an attempt, a window longer than its maximum, ...) with `webhook_sender_options_invalid`.
 */
export function resolveSenderOptions(options: WebhookSenderOptions): ResolvedSenderOptions {
  if (!options || typeof options !== 'object') throw invalid('options are required')
  if (!options.outbox) throw invalid('an outbox store is required')
  if (!options.key || typeof options.key.d !== 'string')
    throw invalid('key must be a private JWK (with "d") for RFC 9421 signatures')
  const fetchFunction = options.fetch ?? globalThis.fetch
  if (typeof fetchFunction !== 'function') throw invalid('no fetch function is available')
  const retry = options.retry ?? {}
  const policy: RetryPolicy = {
    horizonSeconds: number(options.retryHorizonSeconds, 86_400, 'retryHorizonSeconds', (n) => n > 0),
    baseDelaySeconds: number(retry.baseDelaySeconds, 2, 'retry.baseDelaySeconds', (n) => n > 0),
    maxDelaySeconds: number(retry.maxDelaySeconds, 900, 'retry.maxDelaySeconds', (n) => n > 0),
    jitter: number(retry.jitter, 0.5, 'retry.jitter', (n) => n >= 0 && n <= 1),
    maxRetryAfterSeconds: number(
      retry.maxRetryAfterSeconds,
      3_600,
      'retry.maxRetryAfterSeconds',
      (n) => n >= 0,
    ),
  }
  if (policy.maxDelaySeconds < policy.baseDelaySeconds)
    throw invalid('retry.maxDelaySeconds must be at least retry.baseDelaySeconds')
  const timeoutMs = number(options.timeoutMs, 10_000, 'timeoutMs', (n) => n > 0)
  const leaseSeconds = number(options.leaseSeconds, 60, 'leaseSeconds', (n) => n > 0)
  if (leaseSeconds * 1000 <= timeoutMs)
    throw invalid(`leaseSeconds (${leaseSeconds}) must exceed the attempt timeout (${timeoutMs} ms)`)
  const a2aVersion = options.a2aVersion ?? '0.3'
  if (a2aVersion !== '0.3' && a2aVersion !== '1.0')
    throw invalid(`a2aVersion must be "0.3" or "1.0", not ${String(options.a2aVersion)}`)
  const refuseBearer = options.refuseBearerForMutatingTasks ?? true
  if (typeof refuseBearer !== 'boolean') throw invalid('refuseBearerForMutatingTasks must be a boolean')
  return {
    fetch: fetchFunction,
    now: options.now ?? (() => Date.now() / 1000),
    random: options.random ?? Math.random,
    retry: policy,
    coalesce: resolveCoalesce(options.coalesce),
    concurrency: number(options.concurrency, 8, 'concurrency', (n) => Number.isInteger(n) && n >= 1),
    leaseSeconds,
    timeoutMs,
    pollIntervalMs: number(options.pollIntervalMs, 1_000, 'pollIntervalMs', (n) => n > 0),
    a2aVersion,
    refuseBearerForMutatingTasks: refuseBearer,
  }
}
