/**
 * Grades one storyboard validation: the single-response field checks ({@link gradeFieldCheck}) and every
 * other kind the 3.1.19 bundle uses (runner-output-contract.yaml `authored_check_kinds` and
 * `cross_response_check_kinds`). A kind outside that list fails the step loudly with its name.
 */
import { errorCodeOf, gradeFieldCheck, type CheckInput, type Grade } from './checks.js'
import type { HttpObservation } from './http.js'
import { resolveAll, resolvePath } from './path.js'
import type { Validation } from './types.js'
import { gradeUpstreamTraffic, type ControllerCall } from './upstream-traffic.js'

/** Every check kind the runner grades (the 3.1.19 enums). */
export const CHECK_KINDS: readonly string[] = [
  'response_schema',
  'field_present',
  'field_absent',
  'field_pattern',
  'envelope_field_present',
  'envelope_field_absent',
  'envelope_field_pattern',
  'field_value',
  'field_value_or_absent',
  'field_contains',
  'status_code',
  'http_status',
  'http_status_in',
  'error_code',
  'on_401_require_header',
  'resource_equals_agent_url',
  'any_of',
  'refs_resolve',
  'a2a_submitted_artifact',
  'a2a_context_continuity',
  'field_less_than',
  'field_equals_context',
  'upstream_traffic',
  'canonical_format_satisfaction',
  'cross_response_field_equal',
  'cross_response_count_distinct',
  'replay_not_cached_rate_limit',
]

/** Everything a validation may be graded against. */
export interface GradeInput extends CheckInput {
  transport: 'mcp' | 'a2a'
  http: HttpObservation | undefined
  agentUrl: string
  /** The substituted request the step sent. */
  request: Record<string, unknown>
  /** Branch-set flags contributed so far (for `any_of` on `assert_contribution`). */
  contributions: ReadonlySet<string>
  /** Calls `comply_test_controller`, or undefined when the agent has none. */
  controller: ControllerCall | undefined
  /** The raw transport result (A2A task), for the A2A checks. */
  raw: unknown
  /** The transport marked the call failed. */
  transportError: boolean
}

const show = (value: unknown): string => (value === undefined ? 'absent' : JSON.stringify(value))
const normalizeUrl = (value: string): string => {
  try {
    const url = new URL(value)
    return `${url.protocol}//${url.host.toLowerCase()}${url.pathname.replace(/\/+$/, '')}`
  } catch {
    return value.replace(/\/+$/, '').toLowerCase()
  }
}

function expected(validation: Validation): unknown[] {
  return [...('value' in validation ? [validation.value] : []), ...(validation.allowed_values ?? [])]
}

function refsResolve(validation: Validation, input: GradeInput): Grade {
  type Side = { from?: string; path?: string }
  const source = validation.source as Side | undefined
  const target = validation.target as Side | undefined
  const keys = (validation.match_keys as string[] | undefined) ?? []
  if (!source?.path || !target?.path || keys.length === 0) {
    return { passed: false, detail: 'refs_resolve needs source.path, target.path and match_keys' }
  }
  const contextObject = Object.fromEntries(input.context)
  const read = (side: Side) =>
    resolveAll(side.from === 'context' ? contextObject : input.body, side.path!).slice(0, 10_000)
  const scope = validation.scope as { key?: string; equals?: string } | undefined
  const scopeValue = scope?.equals === '$agent_url' ? input.agentUrl : scope?.equals
  const project = (ref: unknown): string | undefined => {
    if (ref === null || typeof ref !== 'object') return undefined
    const record = ref as Record<string, unknown>
    if (!keys.every((key) => typeof record[key] === 'string')) return undefined
    return JSON.stringify(
      keys.map((key) => (key.endsWith('url') ? normalizeUrl(String(record[key])) : record[key])),
    )
  }
  const targets = new Set(
    read(target)
      .map(project)
      .filter((value): value is string => value !== undefined),
  )
  const missing = new Set<string>()
  const outOfScope = new Set<string>()
  for (const ref of read(source)) {
    const record = (ref ?? {}) as Record<string, unknown>
    if (scope?.key && scopeValue !== undefined) {
      const actual = String(record[scope.key] ?? '')
      const same = scope.key.endsWith('url')
        ? normalizeUrl(actual) === normalizeUrl(scopeValue)
        : actual === scopeValue
      if (!same) {
        outOfScope.add(JSON.stringify(ref))
        continue
      }
    }
    const projected = project(ref)
    if (projected === undefined || !targets.has(projected)) missing.add(projected ?? JSON.stringify(ref))
  }
  if (validation.on_out_of_scope === 'fail') for (const ref of outOfScope) missing.add(ref)
  if (missing.size) return { passed: false, detail: `unresolved refs: ${[...missing].join(', ')}` }
  return outOfScope.size && validation.on_out_of_scope !== 'ignore'
    ? { passed: true, detail: `out of scope: ${[...outOfScope].join(', ')}` }
    : { passed: true }
}

function canonicalFormatSatisfaction(validation: Validation, input: GradeInput): Grade {
  const accepted = !errorCodeOf(input.body) && !input.transportError
  if (validation.value === true) {
    return accepted
      ? { passed: true }
      : {
          passed: false,
          detail: `expected the package format selectors accepted, got error ${errorCodeOf(input.body) ?? 'transport error'}`,
        }
  }
  const code = errorCodeOf(input.body)
  return !accepted && code !== undefined && /FORMAT|INVALID_REQUEST|UNSUPPORTED/.test(code)
    ? { passed: true }
    : {
        passed: false,
        detail: `expected a format-selector rejection, got ${accepted ? 'success' : `error ${code ?? 'without code'}`}`,
      }
}

/**
 * Grades one validation.
 * @example await gradeValidation({ check: 'http_status_in', allowed_values: [401, 403] }, input)
 */
export async function gradeValidation(validation: Validation, input: GradeInput): Promise<Grade> {
  const field = gradeFieldCheck(validation, input)
  if (field) return field
  const status = input.http?.status
  switch (validation.check) {
    case 'envelope_field_present':
    case 'envelope_field_absent':
    case 'envelope_field_pattern': {
      const kind = validation.check.replace('envelope_', '')
      return gradeFieldCheck({ ...validation, check: kind }, input)!
    }
    case 'status_code':
    case 'http_status':
    case 'http_status_in': {
      const allowed = expected(validation)
      if (status === undefined)
        return { passed: false, detail: `expected HTTP status in ${show(allowed)}, got no HTTP response` }
      return allowed.includes(status)
        ? { passed: true }
        : { passed: false, detail: `expected HTTP status in ${show(allowed)}, got ${status}` }
    }
    case 'on_401_require_header': {
      if (status !== 401) return { passed: true, detail: `HTTP status ${show(status)}: not a 401` }
      const header = String(validation.value ?? 'www-authenticate').toLowerCase()
      return input.http?.headers[header]
        ? { passed: true }
        : { passed: false, detail: `a 401 without the ${header} header` }
    }
    case 'resource_equals_agent_url': {
      const resource = resolvePath(input.body, String(validation.path ?? 'resource'))
      const agent = [input.agentUrl, `${input.agentUrl}/mcp`, `${input.agentUrl}/a2a`].map(normalizeUrl)
      return typeof resource === 'string' && agent.includes(normalizeUrl(resource))
        ? { passed: true }
        : { passed: false, detail: `expected resource = ${input.agentUrl}, got ${show(resource)}` }
    }
    case 'any_of': {
      const flags = expected(validation).map(String)
      return flags.some((flag) => input.contributions.has(flag))
        ? { passed: true }
        : { passed: false, detail: `no branch contributed any of ${show(flags)}` }
    }
    case 'refs_resolve':
      return refsResolve(validation, input)
    case 'a2a_submitted_artifact':
    case 'a2a_context_continuity': {
      if (input.transport !== 'a2a')
        return { passed: true, notApplicable: `${validation.check} grades A2A runs only` }
      const task = input.raw as
        { contextId?: string; artifacts?: unknown[]; status?: { state?: unknown } } | undefined
      if (validation.check === 'a2a_context_continuity') {
        return task?.contextId ? { passed: true } : { passed: false, detail: 'the A2A task has no contextId' }
      }
      const submitted = /SUBMITTED/i.test(String(task?.status?.state ?? ''))
      return !submitted || (task?.artifacts?.length ?? 0) > 0
        ? { passed: true }
        : { passed: false, detail: 'a submitted A2A task without an artifact carrying the AdCP response' }
    }
    case 'upstream_traffic':
      return gradeUpstreamTraffic(validation, input.request, input.controller)
    case 'canonical_format_satisfaction':
      return canonicalFormatSatisfaction(validation, input)
    case 'cross_response_field_equal':
    case 'cross_response_count_distinct':
    case 'replay_not_cached_rate_limit':
      return {
        passed: true,
        notApplicable: `${validation.check} grades the response set of a parallel_dispatch_runner or rate_limit_trip_runner step; this step dispatched one request`,
      }
    default:
      return {
        passed: false,
        detail: `unknown check kind "${validation.check}": this runner does not grade it`,
      }
  }
}
