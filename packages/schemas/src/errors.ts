import type { z } from 'zod'
import type { AdcpError } from './generated/schemas.js'

const brand = Symbol.for('@adwire/schemas/SchemaError')

/** One problem found in a value, at a JSONPath-lite location such as `packages[0].format_id`. */
export interface SchemaIssue {
  /** Where the problem is: `''` for the value itself, else a path like `assets.hero.url`. */
  readonly path: string
  readonly message: string
}

/**
 * AdCP error codes this package raises. INVALID_FORMAT_ID is not in the 3.1.19 error-code enum, whose
 * vocabulary is open (`core/error.json` types `code` as a string); adwire's service spec names it for a
 * format_id that is not the `{agent_url, id}` object.
 */
export type SchemaErrorCode = 'INVALID_REQUEST' | 'INVALID_FORMAT_ID'

/**
 * A value that does not match an AdCP shape. `code` is the AdCP wire error code (`INVALID_REQUEST`, or
 * `INVALID_FORMAT_ID` when a format_id is not the `{agent_url, id}` object), `issues` says where and why.
 *
 * @example
 * try { parseShape(FormatIdSchema, 'display_300x250') }
 * catch (error) { if (SchemaError.is(error)) console.log(error.code, error.issues) }
 */
export class SchemaError extends Error {
  override readonly name = 'SchemaError'
  readonly [brand] = true
  constructor(
    readonly code: SchemaErrorCode,
    message: string,
    readonly issues: readonly SchemaIssue[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  static is(value: unknown): value is SchemaError {
    return typeof value === 'object' && value !== null && brand in value
  }

  /** The AdCP error object (`core/error.json`) for this failure; `field` names the first issue's path. */
  toAdcpError(): AdcpError & { code: SchemaErrorCode; recovery: 'correctable' } {
    const field = this.issues[0]?.path
    return { code: this.code, message: this.message, ...(field ? { field } : {}), recovery: 'correctable' }
  }
}

/** Renders a zod issue path the way AdCP error `field`s are written: `packages[0].targeting`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`
    else {
      const key = String(segment)
      out += /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`
    }
  }
  return out
}

/** Turns zod issues into {@link SchemaIssue}s, one per leaf problem (union branches are flattened). */
export function toSchemaIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[] = [],
): SchemaIssue[] {
  const out: SchemaIssue[] = []
  for (const issue of issues) {
    const path = [...prefix, ...issue.path]
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the alternative that got furthest (fewest problems), so the message points at a real fix.
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]!
      if (best.length > 0) {
        out.push(...toSchemaIssues(best, path))
        continue
      }
    }
    out.push({ path: formatPath(path), message: issue.message })
  }
  return out
}
