/** AdCP errors raised by the creative agent's domain logic, with the HTTP status a transport may use. */
import { SchemaError } from '@adwire/schemas'

/** The AdCP error codes the creative handlers raise (the 3.1.19 vocabulary plus adwire's INVALID_FORMAT_ID). */
export type CreativeErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_FORMAT_ID'
  | 'FORMAT_NOT_SUPPORTED'
  | 'VALIDATION_ERROR'
  | 'UNSUPPORTED_FEATURE'
  | 'INTERNAL_ERROR'

export type Recovery = 'transient' | 'correctable' | 'terminal'

/** The AdCP error object (`core/error.json`). */
export interface AdcpErrorObject {
  code: string
  message: string
  field?: string
  recovery?: Recovery
  details?: Record<string, unknown>
}

const DEFAULT_STATUS: Record<CreativeErrorCode, number> = {
  INVALID_REQUEST: 400,
  INVALID_FORMAT_ID: 400,
  FORMAT_NOT_SUPPORTED: 404,
  VALIDATION_ERROR: 422,
  UNSUPPORTED_FEATURE: 400,
  INTERNAL_ERROR: 500,
}

/**
 * A failed creative task. `status` is the HTTP status a transport that has one should answer with (400 for a
 * malformed request or format_id, 404 for a format this agent does not support, 422 for a manifest that does not
 * meet its format's requirements); `field` points at the offending request field.
 */
export class CreativeError extends Error {
  override readonly name = 'CreativeError'
  readonly field: string | undefined
  readonly status: number
  readonly recovery: Recovery
  readonly details: Record<string, unknown> | undefined

  constructor(
    readonly code: CreativeErrorCode,
    message: string,
    options: {
      field?: string
      status?: number
      recovery?: Recovery
      details?: Record<string, unknown>
      cause?: unknown
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.field = options.field
    this.status = options.status ?? DEFAULT_STATUS[code]
    this.recovery = options.recovery ?? (code === 'INTERNAL_ERROR' ? 'transient' : 'correctable')
    this.details = options.details
  }

  static is(value: unknown): value is CreativeError {
    return value instanceof CreativeError
  }

  /** Any thrown value as a CreativeError: SchemaErrors keep their code and field, anything else is internal. */
  static from(error: unknown): CreativeError {
    if (error instanceof CreativeError) return error
    if (SchemaError.is(error)) {
      const field = error.issues[0]?.path
      return new CreativeError(error.code, error.message, { ...(field ? { field } : {}), cause: error })
    }
    return new CreativeError('INTERNAL_ERROR', 'internal error', { cause: error })
  }

  /** The AdCP error object for the wire. */
  toAdcpError(): AdcpErrorObject {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined ? { field: this.field } : {}),
      recovery: this.recovery,
      ...(this.details !== undefined ? { details: this.details } : {}),
    }
  }
}

/**
 * The task-body form of a failure (`{status: 'failed', errors: [...]}`, with `context` echoed), valid against
 * the error arms of the list_creative_formats and build_creative response schemas.
 */
export function errorResponse(
  error: unknown,
  input?: unknown,
): { status: 'failed'; errors: AdcpErrorObject[]; context?: unknown } {
  const adcpError = CreativeError.from(error).toAdcpError()
  const context = echoContext(input)
  return { status: 'failed', errors: [adcpError], ...context }
}

/** `{context}` copied unchanged from the raw request, or nothing when the request carried none. */
export function echoContext(input: unknown): { context?: Record<string, unknown> } {
  if (typeof input === 'object' && input !== null && 'context' in input) {
    const context = (input as { context?: unknown }).context
    if (typeof context === 'object' && context !== null && !Array.isArray(context)) {
      return { context: context as Record<string, unknown> }
    }
  }
  return {}
}
