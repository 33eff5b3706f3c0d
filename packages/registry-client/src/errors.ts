/** Typed errors of the registry client. */

/**
 * A failed registry call: the HTTP status (0 when no response arrived), a machine-readable code and a message.
 * Reads both error bodies in use: `{ error: { code, message } }` (adwire registry) and
 * `{ error: 'code' | 'message', message? }` (hosted registry).
 */
export class RegistryError extends Error {
  override readonly name: string = 'RegistryError'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The parsed response body, when there was one. */
    readonly body?: unknown,
  ) {
    super(message)
  }
}

/**
 * The feed cursor is unknown to the registry or older than its retention window (HTTP 410). Resume from a fresh
 * bootstrap: drop the cursor (start of the retention window) or re-sync the state you mirror first.
 */
export class CursorExpiredError extends RegistryError {
  override readonly name = 'CursorExpiredError'
  constructor(
    readonly cursor: string | null,
    message: string,
    body?: unknown,
  ) {
    super(410, 'cursor_expired', message, body)
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

/** Builds the error for a non-2xx response with its (possibly absent or non-JSON) body. */
export function errorFromResponse(status: number, body: unknown, fallbackText?: string): RegistryError {
  const fallbackCode = STATUS_CODES[status] ?? `http_${status}`
  let code = fallbackCode
  let message = fallbackText?.trim() ? fallbackText.trim().slice(0, 500) : `HTTP ${status}`
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>
    const error = record.error
    if (error && typeof error === 'object') {
      const inner = error as Record<string, unknown>
      if (typeof inner.code === 'string') code = inner.code
      if (typeof inner.message === 'string') message = inner.message
    } else if (typeof error === 'string') {
      if (CODE.test(error)) code = error
      message = typeof record.message === 'string' ? record.message : error
    } else if (typeof record.message === 'string') {
      message = record.message
    }
    if (typeof record.error_description === 'string') message = record.error_description
  }
  return new RegistryError(status, code, message, body)
}

/** The error for a request that got no response (connection refused, DNS, abort). */
export function networkError(url: string, cause: unknown): RegistryError {
  const reason =
    cause instanceof Error
      ? cause.cause instanceof Error
        ? cause.cause.message
        : cause.message
      : String(cause)
  const error = new RegistryError(0, 'network_error', `could not reach the registry at ${url}: ${reason}`)
  ;(error as { cause?: unknown }).cause = cause
  return error
}
