/**
 * The `upstream_traffic` check (storyboard-schema.yaml, "upstream_traffic"): asks the agent's
 * `comply_test_controller` for the upstream calls it recorded (`query_upstream_traffic`) and asserts their
 * count, endpoint pattern, payload contents and the forwarding of the request's load-bearing identifiers.
 */
import type { Grade } from './checks.js'
import { resolveAll } from './path.js'
import type { Validation } from './types.js'

/** Calls `comply_test_controller` with a scenario and params; resolves with the response body. */
export type ControllerCall = (
  scenario: string,
  params: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined>

interface RecordedCall {
  endpoint?: string
  payload?: unknown
  content_type?: string
}

const glob = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )

/**
 * Grades one `upstream_traffic` validation.
 * @example await gradeUpstreamTraffic({ check: 'upstream_traffic', min_count: 1 }, request, controller)
 */
export async function gradeUpstreamTraffic(
  validation: Validation,
  request: Record<string, unknown>,
  controller: ControllerCall | undefined,
): Promise<Grade> {
  if (!controller) {
    return {
      passed: true,
      notApplicable: 'missing_test_controller: upstream_traffic needs comply_test_controller',
    }
  }
  const answer = await controller('query_upstream_traffic', {})
  const calls = (answer?.recorded_calls ??
    (answer?.result as Record<string, unknown> | undefined)?.recorded_calls) as RecordedCall[] | undefined
  if (!Array.isArray(calls)) {
    return {
      passed: true,
      notApplicable: 'the controller does not record upstream traffic (no recorded_calls)',
    }
  }
  const pattern =
    typeof validation.endpoint_pattern === 'string' ? glob(validation.endpoint_pattern) : undefined
  const matching = calls.filter((call) => !pattern || pattern.test(String(call.endpoint ?? '')))
  const min = typeof validation.min_count === 'number' ? validation.min_count : 1
  if (matching.length < min) {
    return {
      passed: false,
      detail: `expected at least ${min} upstream call(s)${pattern ? ` matching ${String(validation.endpoint_pattern)}` : ''}, got ${matching.length}`,
    }
  }
  for (const spec of (validation.payload_must_contain as
    { path: string; match?: string; value?: unknown; allowed_values?: unknown[] }[] | undefined) ?? []) {
    const found = matching.some((call) => {
      const values = resolveAll(call.payload, spec.path.replace(/^\$\.?/, ''))
      if (spec.match === 'equals')
        return values.some((value) => JSON.stringify(value) === JSON.stringify(spec.value))
      if (spec.match === 'contains_any')
        return values.some((value) => (spec.allowed_values ?? []).includes(value))
      return values.length > 0
    })
    if (!found)
      return {
        passed: false,
        detail: `no upstream call payload carries ${spec.path}${spec.match ? ` (${spec.match})` : ''}`,
      }
  }
  for (const path of (validation.identifier_paths as string[] | undefined) ?? []) {
    for (const value of resolveAll(request, path).flat()) {
      const needle = String(value)
      if (!matching.some((call) => JSON.stringify(call.payload ?? '').includes(needle))) {
        return { passed: false, detail: `the identifier ${path} = ${needle} was not forwarded upstream` }
      }
    }
  }
  return { passed: true }
}
