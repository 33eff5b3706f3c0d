/**
 * The one check of an agent's task request against its AdCP 3.1.19 shape: the zod schemas @adwire/schemas
 * generates from the official JSON Schemas (they give Ajv's verdict on every vendored example and mutant).
 * The creative agent and @adwire/seller both call it, so a refused request reads the same from either.
 */
import { parseShape, SchemaError, type SchemaIssue } from '@adwire/schemas'
import type { z } from 'zod'
import { AgentError, type AgentErrorOptions } from './errors.js'

/** Where a request is wrong and why: the first issue's field (`''` for the request itself) and a summary. */
export interface RequestProblem {
  readonly field: string
  readonly message: string
  readonly issues: readonly SchemaIssue[]
}

/**
 * The first problems `value` has as a `schema` request, or undefined when it is one.
 *
 * @example
 * requestProblem(ComplyTestControllerRequestSchema, request, 'comply_test_controller request')?.field // 'params.creative_id'
 */
export function requestProblem(schema: z.ZodType, value: unknown, what: string): RequestProblem | undefined {
  try {
    parseShape(schema, value, what)
    return undefined
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    return { field: error.issues[0]?.path ?? '', message: error.message, issues: error.issues }
  }
}

/** Makes the error a refused request throws: an agent with an error class of its own passes its constructor. */
export type RequestErrorFactory = (
  code: 'INVALID_REQUEST',
  message: string,
  options: AgentErrorOptions,
) => AgentError

const agentError: RequestErrorFactory = (code, message, options) => new AgentError(code, message, options)

/**
 * Parses a task request with its generated schema and returns the typed value; a request the schema refuses
 * throws an {@link AgentError} `INVALID_REQUEST` (HTTP 400, `correctable`) whose `field` is the first
 * offending field (none when the request itself is wrong, e.g. not an object) and whose message lists up to
 * five problems with their paths. AdCP 3.1.19 `core/error.json`. `toError` makes that error (default: an
 * AgentError), for an agent whose errors are a subclass.
 *
 * @example
 * const request = parseRequest(PreviewCreativeRequestSchema, input, 'preview_creative request')
 * // throws AgentError { code: 'INVALID_REQUEST', field: 'creative_manifest.assets.image.url', status: 400 }
 */
export function parseRequest<T extends z.ZodType>(
  schema: T,
  value: unknown,
  what: string,
  toError: RequestErrorFactory = agentError,
): z.output<T> {
  try {
    return parseShape(schema, value, what)
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    const field = error.issues[0]?.path
    throw toError('INVALID_REQUEST', error.message, {
      ...(field ? { field } : {}),
      status: 400,
      cause: error,
    })
  }
}
