/**
 * The creative agent's one error class: an {@link AgentError} (so statuses and recovery classes come from one
 * table, the agent-server's, and every transport renders it) narrowed to the codes the creative handlers raise.
 */
import {
  AgentError,
  type AdcpErrorObject,
  type AgentErrorOptions,
  type RequestErrorFactory,
} from '@adwire/agent-server'
import { FormatsError } from '@adwire/formats'
import { SchemaError } from '@adwire/schemas'

const brand = Symbol.for('@adwire/app-creative-agent/CreativeError')

/** The AdCP error codes the creative handlers raise (the 3.1.19 vocabulary plus adwire's INVALID_FORMAT_ID). */
export type CreativeErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_FORMAT_ID'
  | 'FORMAT_NOT_SUPPORTED'
  | 'VALIDATION_ERROR'
  | 'UNSUPPORTED_FEATURE'
  | 'INTERNAL_ERROR'

/**
 * A failed creative task. `status` is the HTTP status a transport that has one answers with (the agent-server
 * defaults: 400 for a malformed request or format_id, 404 for a format this agent does not support, 422 for a
 * manifest that does not meet its format's requirements or an unsupported feature, 500 internal); `field`
 * points at the offending request field.
 *
 * @example
 * throw new CreativeError('FORMAT_NOT_SUPPORTED', 'no such format', { field: 'target_format_id' })
 */
export class CreativeError extends AgentError {
  override readonly name = 'CreativeError'
  readonly [brand] = true
  declare readonly code: CreativeErrorCode

  constructor(code: CreativeErrorCode, message: string, options: AgentErrorOptions = {}) {
    super(code, message, options)
  }

  static override is(value: unknown): value is CreativeError {
    return typeof value === 'object' && value !== null && brand in value
  }

  /**
   * Any thrown value as an AgentError: AgentErrors (this class included) as they are, FormatsErrors (from
   * @adwire/formats) with their code, field, details, status and recovery, SchemaErrors with their code and
   * field, anything else INTERNAL_ERROR without its message.
   */
  static from(error: unknown): AgentError {
    if (AgentError.is(error)) return error
    if (FormatsError.is(error)) {
      return new CreativeError(error.code, error.message, {
        ...(error.field !== undefined ? { field: error.field } : {}),
        ...(error.details !== undefined ? { details: error.details } : {}),
        status: error.status,
        recovery: error.recovery,
        cause: error,
      })
    }
    if (SchemaError.is(error)) {
      const field = error.issues[0]?.path
      return new CreativeError(error.code, error.message, { ...(field ? { field } : {}), cause: error })
    }
    return new CreativeError('INTERNAL_ERROR', 'internal error', { cause: error })
  }
}

/**
 * A refused request as a CreativeError: what `parseRequest` (@adwire/agent-server, the request check both agents
 * share) throws here.
 *
 * @example
 * parseRequest(PreviewCreativeRequestSchema, input, 'preview_creative request', creativeRequestError)
 */
export const creativeRequestError: RequestErrorFactory = (code, message, options) =>
  new CreativeError(code, message, options)

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
