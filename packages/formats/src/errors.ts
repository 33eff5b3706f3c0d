/**
 * The package's one error class. Its `code` is the AdCP wire code, and it carries what an agent needs to answer
 * with an AdCP error object (`core/error.json`): the offending `field`, `details`, an HTTP status hint and the
 * recovery class, so an app maps it to its own transport error without a table of its own.
 */
import { SchemaError } from '@adwire/schemas'

const brand = Symbol.for('@adwire/formats/FormatsError')

/**
 * The AdCP error codes this package raises. INVALID_FORMAT_ID is not in the 3.1.19 error-code enum, whose
 * vocabulary is open (`core/error.json` types `code` as a string); adwire uses it for a format_id that is not
 * the `{agent_url, id}` object.
 */
export type FormatsErrorCode =
  'INVALID_REQUEST' | 'INVALID_FORMAT_ID' | 'FORMAT_NOT_SUPPORTED' | 'VALIDATION_ERROR'

/** `core/error.json` recovery classes; every code of this package is correctable by the caller. */
export type FormatsErrorRecovery = 'correctable'

/** The HTTP status each code answers with where a transport has one (the agent-server's defaults). */
const STATUS: Record<FormatsErrorCode, number> = {
  INVALID_REQUEST: 400,
  INVALID_FORMAT_ID: 400,
  FORMAT_NOT_SUPPORTED: 404,
  VALIDATION_ERROR: 422,
}

export interface FormatsErrorOptions {
  /** JSONPath-lite location of the offending request field, e.g. `pagination.cursor` or `format_ids[0]`. */
  readonly field?: string
  readonly details?: Readonly<Record<string, unknown>>
  readonly cause?: unknown
}

/**
 * A request this package cannot answer. `status` is the HTTP status hint (400 for a malformed request or
 * format_id, 404 for a format not offered, 422 for a value that breaks a format's requirements); `recovery`
 * is always `correctable`.
 *
 * @example
 * try {
 *   await listCreativeFormats({ format_ids: ['display_300x250_image'] }, { agentUrl })
 * } catch (error) {
 *   if (FormatsError.is(error)) console.log(error.code, error.field, error.status) // INVALID_FORMAT_ID format_ids[0] 400
 * }
 */
export class FormatsError extends Error {
  override readonly name = 'FormatsError'
  readonly [brand] = true
  readonly field: string | undefined
  readonly details: Readonly<Record<string, unknown>> | undefined
  readonly status: number
  readonly recovery: FormatsErrorRecovery = 'correctable'

  constructor(
    readonly code: FormatsErrorCode,
    message: string,
    options: FormatsErrorOptions = {},
  ) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined)
    this.field = options.field
    this.details = options.details
    this.status = STATUS[code]
  }

  static is(value: unknown): value is FormatsError {
    return typeof value === 'object' && value !== null && brand in value
  }

  /** A SchemaError (a value that does not match its AdCP shape) as a FormatsError with its code and field. */
  static fromSchemaError(error: SchemaError): FormatsError {
    const field = error.issues[0]?.path
    return new FormatsError(error.code, error.message, { ...(field ? { field } : {}), cause: error })
  }
}

/** Runs `parse`, turning a SchemaError into a FormatsError; anything else is rethrown unchanged. */
export function parseOrThrow<T>(parse: () => T): T {
  try {
    return parse()
  } catch (error) {
    if (SchemaError.is(error)) throw FormatsError.fromSchemaError(error)
    throw error
  }
}
