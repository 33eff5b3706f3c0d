import type { z } from 'zod'
import { SchemaError, toSchemaIssues } from './errors.js'
import { FormatIdSchema } from './generated/schemas.js'

/**
 * Parses `value` with an AdCP schema and returns the typed result, or throws a {@link SchemaError}
 * (`INVALID_REQUEST`) whose message lists each problem with its path.
 *
 * @example
 * const request = parseShape(ListCreativeFormatsRequestSchema, JSON.parse(body))
 */
export function parseShape<T extends z.ZodType>(schema: T, value: unknown, what = 'value'): z.output<T> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issues = toSchemaIssues(result.error.issues)
  const summary = issues
    .slice(0, 5)
    .map((issue) => `${issue.path || '(root)'}: ${issue.message}`)
    .join('; ')
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : ''
  throw new SchemaError('INVALID_REQUEST', `invalid ${what}: ${summary}${more}`, issues, {
    cause: result.error,
  })
}

/**
 * Parses a format_id, which AdCP requires to be the `{agent_url, id}` object. A bare string (the pre-3.0 form)
 * or any other malformed value throws a {@link SchemaError} with code `INVALID_FORMAT_ID`.
 */
export function parseFormatId(value: unknown): z.output<typeof FormatIdSchema> {
  try {
    return parseShape(FormatIdSchema, value, 'format_id')
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    const hint =
      typeof value === 'string'
        ? ` (a bare string "${value}" is not a format_id; send {"agent_url", "id"})`
        : ''
    throw new SchemaError('INVALID_FORMAT_ID', `${error.message}${hint}`, error.issues, { cause: error })
  }
}
