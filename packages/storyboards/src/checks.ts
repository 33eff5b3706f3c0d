/**
 * The storyboard `validations[].check` kinds this runner grades, with the semantics of
 * `universal/storyboard-schema.yaml` ("Validation") and `universal/runner-output-contract.yaml`. A kind it does
 * not implement throws {@link UnsupportedCheck}: it never passes silently.
 */
import type { SchemaValidator } from './schemas.js'
import { isWildcardPath, resolveAll, resolvePath } from './path.js'
import type { Validation } from './types.js'
import { isRecord } from '@adwire/schemas/json'

/** The single-response check kinds {@link gradeFieldCheck} grades. */
export const FIELD_CHECKS = [
  'response_schema',
  'field_present',
  'field_absent',
  'field_value',
  'field_value_or_absent',
  'field_contains',
  'field_pattern',
  'error_code',
  'field_equals_context',
  'field_less_than',
] as const

/** What a check is graded against. */
export interface CheckInput {
  /** The AdCP response object of the step. */
  body: Record<string, unknown> | undefined
  /** The step's `response_schema_ref` (a schema file of the bundle's version). */
  responseSchemaRef: string | undefined
  /** Values captured by earlier steps. */
  context: ReadonlyMap<string, unknown>
  schemas: SchemaValidator | undefined
}

/** A graded check: passed, or failed with expected vs got; `detail` is also an observation on a pass. */
export interface Grade {
  passed: boolean
  detail?: string
  /** Set when the check could not apply (a coverage gap, not a verdict); it then passes. */
  notApplicable?: string
}

const show = (value: unknown): string => (value === undefined ? 'absent' : JSON.stringify(value))

/** JSON equality: object member order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
    )
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a)
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && jsonEqual(a[key], b[key]))
    )
  }
  return false
}

/** `field_contains` matching: scalars exactly, objects and arrays as deep subsets. */
function containsMatch(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return false
    const used = new Set<number>()
    return expected.every((item) => {
      const index = actual.findIndex((candidate, i) => !used.has(i) && containsMatch(candidate, item))
      if (index === -1) return false
      used.add(index)
      return true
    })
  }
  if (isRecord(expected)) {
    return (
      isRecord(actual) &&
      Object.entries(expected).every(
        ([key, value]) =>
          Object.prototype.hasOwnProperty.call(actual, key) && containsMatch(actual[key], value),
      )
    )
  }
  return jsonEqual(actual, expected)
}

/** The expected values of a check: `value` and/or `allowed_values`. */
function expectedValues(validation: Validation): unknown[] | undefined {
  const values: unknown[] = []
  if ('value' in validation) values.push(validation.value)
  if (Array.isArray(validation.allowed_values)) values.push(...validation.allowed_values)
  return values.length ? values : undefined
}

function requirePath(validation: Validation): string {
  if (typeof validation.path !== 'string') throw new Error(`check ${validation.check} needs a path`)
  if (isWildcardPath(validation.path) && validation.check !== 'field_contains') {
    throw new Error(`check ${validation.check} does not take a wildcard path (${validation.path})`)
  }
  return validation.path
}

/**
 * The AdCP error code of a response, from either transport-binding location: the envelope `adcp_error.code`
 * or the payload `errors[0].code` (storyboard-schema.yaml, "Error-shape validation").
 */
export function errorCodeOf(body: Record<string, unknown> | undefined): string | undefined {
  const envelope = body?.adcp_error
  if (isRecord(envelope) && typeof envelope.code === 'string') return envelope.code
  const errors = body?.errors
  if (Array.isArray(errors) && isRecord(errors[0]) && typeof errors[0].code === 'string')
    return errors[0].code
  return undefined
}

/**
 * Whether an answer is an error response for `expect_error`: an AdCP error (`adcp_error` or `errors[0]`), or the
 * test controller's error arm (comply-test-controller-response.json `ControllerError`: `success: false` with an
 * `error` code), which the controller answers as a completed task.
 * @example isErrorAnswer({ success: false, error: 'FORBIDDEN' }) // true
 */
export function isErrorAnswer(body: Record<string, unknown> | undefined): boolean {
  if (errorCodeOf(body) !== undefined) return true
  return body?.success === false && typeof body.error === 'string'
}

/**
 * Grades one single-response check; undefined when the kind is not one of {@link FIELD_CHECKS}.
 * @example gradeFieldCheck({ check: 'field_present', path: 'formats' }, input)?.passed
 */
export function gradeFieldCheck(validation: Validation, input: CheckInput): Grade | undefined {
  const { body } = input
  switch (validation.check) {
    case 'response_schema': {
      if (!input.responseSchemaRef)
        return { passed: false, detail: 'response_schema on a step without response_schema_ref' }
      if (!body) return { passed: false, detail: 'no AdCP response object to validate' }
      if (!input.schemas) return { passed: true, notApplicable: 'no JSON Schemas for the bundle version' }
      const errors = input.schemas.errors(input.responseSchemaRef, body)
      return errors.length
        ? { passed: false, detail: `${input.responseSchemaRef}: ${errors.slice(0, 8).join('; ')}` }
        : { passed: true }
    }
    case 'field_present': {
      const value = resolvePath(body, requirePath(validation))
      return value === undefined || value === null
        ? { passed: false, detail: `expected ${validation.path} present, got ${show(value)}` }
        : { passed: true }
    }
    case 'field_absent': {
      const value = resolvePath(body, requirePath(validation))
      return value === undefined || value === null
        ? { passed: true }
        : { passed: false, detail: `expected ${validation.path} absent, got ${show(value)}` }
    }
    case 'field_value':
    case 'field_value_or_absent': {
      const expected = expectedValues(validation)
      if (!expected) throw new Error(`${validation.check} needs value or allowed_values`)
      const value = resolvePath(body, requirePath(validation))
      if (value === undefined && validation.check === 'field_value_or_absent') return { passed: true }
      return expected.some((candidate) => jsonEqual(value, candidate))
        ? { passed: true }
        : {
            passed: false,
            detail: `expected ${validation.path} ${expected.length > 1 ? 'in' : '='} ${show(expected.length > 1 ? expected : expected[0])}, got ${show(value)}`,
          }
    }
    case 'field_contains': {
      const expected = expectedValues(validation)
      if (!expected) throw new Error('field_contains needs value or allowed_values')
      const path = requirePath(validation)
      let candidates = resolveAll(body, path)
      if (!isWildcardPath(path) && candidates.length === 1 && Array.isArray(candidates[0])) {
        candidates = candidates[0]
      }
      return candidates.some((candidate) => expected.some((value) => containsMatch(candidate, value)))
        ? { passed: true }
        : { passed: false, detail: `expected ${path} to contain ${show(expected)}, got ${show(candidates)}` }
    }
    case 'field_pattern': {
      if (typeof validation.pattern !== 'string') throw new Error('field_pattern needs a pattern')
      const value = resolvePath(body, requirePath(validation))
      return typeof value === 'string' && new RegExp(validation.pattern).test(value)
        ? { passed: true }
        : {
            passed: false,
            detail: `expected ${validation.path} to match /${validation.pattern}/, got ${show(value)}`,
          }
    }
    case 'error_code': {
      const code = errorCodeOf(body)
      const expected = expectedValues(validation)
      if (code === undefined) {
        return {
          passed: false,
          detail: `expected an AdCP error code${expected ? ` in ${show(expected)}` : ''}, got none (response ${show(body)})`,
        }
      }
      return !expected || expected.includes(code)
        ? { passed: true }
        : { passed: false, detail: `expected error code in ${show(expected)}, got ${code}` }
    }
    case 'field_equals_context': {
      if (typeof validation.context_key !== 'string')
        throw new Error('field_equals_context needs context_key')
      if (!input.context.has(validation.context_key)) {
        return { passed: true, detail: `context_key_absent: ${validation.context_key}` }
      }
      const expected = input.context.get(validation.context_key)
      const value = resolvePath(body, requirePath(validation))
      return jsonEqual(value, expected)
        ? { passed: true }
        : {
            passed: false,
            detail: `expected ${validation.path} = ${show(expected)} (context ${validation.context_key}), got ${show(value)}`,
          }
    }
    case 'field_less_than': {
      const bound =
        typeof validation.context_key === 'string'
          ? input.context.get(validation.context_key)
          : validation.value
      if (typeof validation.context_key === 'string' && !input.context.has(validation.context_key)) {
        return { passed: true, detail: `context_key_absent: ${validation.context_key}` }
      }
      const value = resolvePath(body, requirePath(validation))
      return typeof value === 'number' && typeof bound === 'number' && Number.isFinite(value) && value < bound
        ? { passed: true }
        : { passed: false, detail: `expected ${validation.path} < ${show(bound)}, got ${show(value)}` }
    }
    default:
      return undefined
  }
}
