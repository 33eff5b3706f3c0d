/** The registry client's one error class (and its cursor-expired subclass). */

const brand = Symbol.for('@adwire/registry-client/RegistryError')
const cursorBrand = Symbol.for('@adwire/registry-client/CursorExpiredError')

/**
 * Codes the client sets itself; any other is the registry's own (`brand_not_found`, `invalid_selector`…) or,
 * when the body names none, one from the status (`not_found`, `rate_limited`, `http_418`…).
 */
export type RegistryErrorCode =
  | 'network_error'
  | 'invalid_response'
  | 'cursor_expired'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'bad_gateway'
  | 'unavailable'
  | 'gateway_timeout'
  | (string & {})

/** What a {@link RegistryError} is built from. */
export interface RegistryErrorOptions {
  readonly message: string
  readonly code: RegistryErrorCode
  /** The URL called. */
  readonly url: string
  /** The HTTP status; undefined when no response arrived. */
  readonly statusCode?: number
  /** The response body as text, when there was one. */
  readonly responseBody?: string
  /** The parsed response body (or stream message), when it was JSON. */
  readonly data?: unknown
  /** Default: no response, 408, 429 or a 5xx. */
  readonly isRetryable?: boolean
  /** Seconds the registry asked to wait (a 429's `Retry-After` or `retryAfter`). */
  readonly retryAfter?: number
  readonly cause?: unknown
}

/**
 * A failed registry call (the shape of vercel/ai's `APICallError`): the URL, the HTTP status (undefined when no
 * response arrived), the response body, whether a retry may succeed, the seconds to wait when the registry said
 * so, and a machine-readable `code`. Reads the official document's `Error`, `{ "error": "code", "message": "…" }`
 * (`RateLimitError` adds `retryAfter`), and the older `{ "error": "message", "code": "…" }` and
 * `{ "error": { code, message } }` forms.
 *
 * @example
 * try { await client.resolveBrand('nothing.example') }
 * catch (error) { if (RegistryError.is(error) && error.isRetryable) retryLater() }
 */
export class RegistryError extends Error {
  override readonly name: string = 'RegistryError'
  readonly [brand] = true
  readonly code: RegistryErrorCode
  readonly url: string
  readonly statusCode: number | undefined
  readonly responseBody: string | undefined
  readonly data: unknown
  readonly isRetryable: boolean
  /** Seconds the registry asked the caller to wait before retrying, when it said. */
  readonly retryAfter: number | undefined

  constructor(options: RegistryErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = options.code
    this.url = options.url
    this.statusCode = options.statusCode
    this.responseBody = options.responseBody
    this.data = options.data
    this.retryAfter = options.retryAfter
    const status = options.statusCode
    this.isRetryable =
      options.isRetryable ?? (status === undefined || status === 408 || status === 429 || status >= 500)
  }

  /** @deprecated Use `statusCode` (this is `statusCode ?? 0`). */
  get status(): number {
    return this.statusCode ?? 0
  }

  /** @deprecated Use `data`. */
  get body(): unknown {
    return this.data
  }

  static is(value: unknown): value is RegistryError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

/**
 * The feed cursor is unknown to the registry or older than its retention window (HTTP 410). Resume from a fresh
 * bootstrap: drop the cursor (start of the retention window) or re-sync the state you mirror first.
 */
export class CursorExpiredError extends RegistryError {
  override readonly name = 'CursorExpiredError'
  readonly [cursorBrand] = true
  constructor(
    readonly cursor: string | null,
    options: Omit<RegistryErrorOptions, 'code' | 'isRetryable'>,
  ) {
    super({ ...options, code: 'cursor_expired', isRetryable: false })
  }

  static override is(value: unknown): value is CursorExpiredError {
    return typeof value === 'object' && value !== null && cursorBrand in value
  }
}

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
}

const CODE = /^[a-z][a-z0-9_.]*$/

/** Builds the error for a non-2xx response (or an error message) from its parsed body and its text. */
export function errorFromResponse(response: {
  readonly url: string
  readonly statusCode: number
  readonly data?: unknown
  readonly responseBody?: string
  readonly isRetryable?: boolean
  /** The response headers (for `Retry-After`). */
  readonly headers?: Headers
}): RegistryError {
  const { statusCode, data, responseBody } = response
  let retryAfter = seconds(response.headers?.get('retry-after'))
  let code = STATUS_CODES[statusCode] ?? `http_${statusCode}`
  let message = responseBody?.trim() ? responseBody.trim().slice(0, 500) : `HTTP ${statusCode}`
  if (data && typeof data === 'object') {
    const record = data as Record<string, unknown>
    const error = record.error
    if (error && typeof error === 'object') {
      const inner = error as Record<string, unknown>
      if (typeof inner.code === 'string') code = inner.code
      if (typeof inner.message === 'string') message = inner.message
    } else if (typeof error === 'string') {
      if (typeof record.code === 'string') code = record.code
      else if (CODE.test(error)) code = error
      message = typeof record.message === 'string' ? record.message : error
    } else if (typeof record.message === 'string') {
      message = record.message
    }
    if (typeof record.error_description === 'string') message = record.error_description
    retryAfter = seconds(record.retryAfter) ?? seconds(record.retry_after) ?? retryAfter
  }
  return new RegistryError({
    message,
    code,
    url: response.url,
    statusCode,
    ...(responseBody !== undefined ? { responseBody } : {}),
    ...(data !== undefined ? { data } : {}),
    ...(response.isRetryable !== undefined ? { isRetryable: response.isRetryable } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  })
}

/** A whole number of seconds ≥ 0 from a header or body value, else undefined. */
function seconds(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  return typeof number === 'number' && Number.isInteger(number) && number >= 0 ? number : undefined
}

/** The error for a request that got no response (connection refused, DNS, abort). */
export function networkError(url: string, cause: unknown, registry = url): RegistryError {
  const reason =
    cause instanceof Error
      ? cause.cause instanceof Error
        ? cause.cause.message
        : cause.message
      : String(cause)
  return new RegistryError({
    message: `could not reach the registry at ${registry}: ${reason}`,
    code: 'network_error',
    url,
    cause,
  })
}
