import type { AdcpError } from '@adwire/schemas'

const brand = Symbol.for('@adwire/agent-server/AgentError')

/**
 * AdCP error codes the task server raises itself (`enums/error-code.json`, 3.1.19). The vocabulary is open
 * (`core/error.json` types `code` as a string), so handlers may throw any other code too.
 */
export type AgentErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_FORMAT_ID'
  | 'AUTH_MISSING'
  | 'AUTH_REQUIRED'
  | 'AUTH_INVALID'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_IN_FLIGHT'
  | 'RATE_LIMITED'
  | 'FORMAT_NOT_SUPPORTED'
  | 'REFERENCE_NOT_FOUND'
  | 'UNSUPPORTED_FEATURE'
  | 'VALIDATION_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR'
  | (string & {})

/** `core/error.json` recovery classes. */
export type Recovery = NonNullable<AdcpError['recovery']>

/** The AdCP error object (`core/error.json`) as sent on the wire: the type `@adwire/schemas` generates. */
export type AdcpErrorObject = AdcpError

/**
 * HTTP status and recovery by code. Recovery is the `enumMetadata` of `enums/error-code.json` (3.1.19): every
 * catalogued code here is `correctable` but IDEMPOTENCY_IN_FLIGHT, RATE_LIMITED, SERVICE_UNAVAILABLE
 * (`transient`) and AUTH_INVALID (`terminal`). INVALID_FORMAT_ID and INTERNAL_ERROR are not catalogued:
 * INTERNAL_ERROR is `terminal` (an unexpected failure leaves the outcome undefined, so callers re-read before
 * they retry, as `get_products` says of it) and 500; UNSUPPORTED_FEATURE is a well-formed request this agent
 * cannot honour, 422.
 */
const defaults: Record<string, { status: number; recovery: Recovery }> = {
  INVALID_REQUEST: { status: 400, recovery: 'correctable' },
  INVALID_FORMAT_ID: { status: 400, recovery: 'correctable' },
  AUTH_MISSING: { status: 401, recovery: 'correctable' },
  AUTH_REQUIRED: { status: 401, recovery: 'correctable' },
  AUTH_INVALID: { status: 401, recovery: 'terminal' },
  INSUFFICIENT_PERMISSIONS: { status: 403, recovery: 'correctable' },
  IDEMPOTENCY_CONFLICT: { status: 409, recovery: 'correctable' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, recovery: 'transient' },
  IDEMPOTENCY_EXPIRED: { status: 409, recovery: 'correctable' },
  RATE_LIMITED: { status: 429, recovery: 'transient' },
  FORMAT_NOT_SUPPORTED: { status: 404, recovery: 'correctable' },
  REFERENCE_NOT_FOUND: { status: 404, recovery: 'correctable' },
  UNSUPPORTED_FEATURE: { status: 422, recovery: 'correctable' },
  VALIDATION_ERROR: { status: 422, recovery: 'correctable' },
  SERVICE_UNAVAILABLE: { status: 503, recovery: 'transient' },
  INTERNAL_ERROR: { status: 500, recovery: 'terminal' },
}

export interface AgentErrorOptions {
  /** JSONPath-lite location of the offending request field, e.g. `packages[0].format_id`. */
  readonly field?: string
  /** HTTP status hint for transports that have one (default by code: 400, 401, 403, 404, 409, 422, 429, 5xx). */
  readonly status?: number
  readonly details?: Readonly<Record<string, unknown>>
  readonly suggestion?: string
  /** Seconds (1 to 3600) the caller should wait before retrying. */
  readonly retryAfter?: number
  readonly recovery?: Recovery
  readonly cause?: unknown
}

/**
 * A task failure with an AdCP error `code` (the wire code, e.g. `INVALID_FORMAT_ID`). Thrown by handlers and
 * by the server itself; every transport renders it with {@link failedTaskBody} (`{status: 'failed', errors: [...], adcp_error, context}`).
 *
 * @example
 * throw new AgentError('FORMAT_NOT_SUPPORTED', 'no such format', { field: 'target_format_id', status: 404 })
 */
export class AgentError extends Error {
  override readonly name: string = 'AgentError'
  readonly [brand] = true
  readonly field: string | undefined
  readonly status: number
  readonly details: Readonly<Record<string, unknown>> | undefined
  readonly suggestion: string | undefined
  readonly retryAfter: number | undefined
  readonly recovery: Recovery

  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options: AgentErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    const known = defaults[code]
    this.field = options.field
    this.status = options.status ?? known?.status ?? 400
    this.details = options.details
    this.suggestion = options.suggestion
    this.retryAfter = options.retryAfter
    this.recovery = options.recovery ?? known?.recovery ?? 'correctable'
  }

  static is(value: unknown): value is AgentError {
    return typeof value === 'object' && value !== null && brand in value
  }

  /** The `core/error.json` object for the wire. */
  toAdcpError(): AdcpErrorObject {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined ? { field: this.field } : {}),
      ...(this.suggestion !== undefined ? { suggestion: this.suggestion } : {}),
      ...(this.retryAfter !== undefined ? { retry_after: this.retryAfter } : {}),
      ...(this.details !== undefined ? { details: { ...this.details } } : {}),
      recovery: this.recovery,
    }
  }
}

/** The body of a failed task on the wire: the two-layer error model of AdCP 3.1 (`error-handling.mdx`). */
export interface FailedTaskBody {
  readonly status: 'failed'
  /** The payload layer: the same error object, so a task's `{errors}` response arm validates. */
  readonly errors: readonly AdcpErrorObject[]
  /** The envelope layer (`protocol-envelope.json` `adcp_error`). */
  readonly adcp_error: AdcpErrorObject
  /** The request's `context`, echoed unchanged. */
  readonly context?: Readonly<Record<string, unknown>>
}

/**
 * The response body every transport sends for a failed task: `status: 'failed'`, the AdCP error object both in
 * the payload `errors[]` and as the envelope `adcp_error`, and the request `context` echoed.
 *
 * @example
 * failedTaskBody(new AgentError('FORMAT_NOT_SUPPORTED', 'no such format', { field: 'target_format_id' }), { correlation_id: 'c1' })
 * // { status: 'failed', errors: [{ code: 'FORMAT_NOT_SUPPORTED', … }], adcp_error: { code: 'FORMAT_NOT_SUPPORTED', … }, context: { correlation_id: 'c1' } }
 */
export function failedTaskBody(
  error: AgentError,
  context: Readonly<Record<string, unknown>> | undefined,
): FailedTaskBody {
  const adcpError = error.toAdcpError()
  return {
    status: 'failed',
    errors: [adcpError],
    adcp_error: adcpError,
    ...(context ? { context } : {}),
  }
}

/** Any thrown value as an AgentError: unknown failures become `INTERNAL_ERROR` without leaking their message. */
export function toAgentError(error: unknown): AgentError {
  if (AgentError.is(error)) return error
  return new AgentError('INTERNAL_ERROR', 'the task failed unexpectedly', { cause: error })
}
