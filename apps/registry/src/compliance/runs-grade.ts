/**
 * From the runner's result document (`adwire-storyboards-result/1`) to what the registry stores and answers:
 * one verdict per storyboard in the document's `StoryboardStatus` terms, the per-step diagnostics, the run's
 * overall status and tracks.
 */
import type { BundleEntry, StepResult, StoryboardResult } from '@adwire/storyboards'
import { categoryOf, findStoryboard, trackOf } from './runs-catalog.js'
import type { StepDiagnostic, StoryboardVerdict } from './runs-store.js'

/** Skips that point at something the agent lacks (counted as failures to act on). */
const ACTIONABLE = new Set([
  'missing_tool',
  'missing_test_controller',
  'unsatisfied_contract',
  'requirement_unmet',
])
/** Skips that are not the agent's concern (another branch ran, the phase does not apply). */
const NOT_EXECUTABLE = new Set(['not_applicable', 'peer_branch_taken', 'peer_substituted'])

const failedValidations = (step: StepResult) => step.validations.filter((validation) => !validation.passed)

/** Why a step failed, in one line. */
export function failureMessage(step: StepResult): string | null {
  if (step.error) return step.error
  const failed = failedValidations(step).find((validation) => validation.severity !== 'advisory')
  if (failed) return `${failed.check}: ${failed.detail ?? failed.description}`
  if (step.skip) return `${step.skip.reason}: ${step.skip.detail}`
  return null
}

/** The storyboard's verdict (the document's `StoryboardStatus` semantics). */
export function verdictOf(result: StoryboardResult, entry?: BundleEntry): StoryboardVerdict {
  const storyboard = (entry ?? findStoryboard(result.key))?.storyboard
  const steps = result.steps
  const executable = steps.filter(
    (step) => step.status !== 'not_applicable' && !(step.skip && NOT_EXECUTABLE.has(step.skip.reason)),
  )
  const rootFailures = executable.filter(
    (step) => step.status === 'failed' || (step.skip !== undefined && ACTIONABLE.has(step.skip.reason)),
  )
  const cascaded = executable.filter((step) => step.skip?.reason === 'prerequisite_failed')
  const first = rootFailures[0]
  const firstStep = first
    ? storyboard?.phases.flatMap((phase) => phase.steps).find((step) => step.id === first.step_id)
    : undefined
  const status =
    result.status === 'failed'
      ? 'failing'
      : result.status === 'passed'
        ? rootFailures.length > 0
          ? 'partial'
          : 'passing'
        : 'untested'
  return {
    storyboard_id: result.storyboard_id,
    title: result.title,
    category: storyboard ? categoryOf(storyboard) : null,
    track: storyboard ? trackOf(storyboard) : null,
    status,
    steps_passed: steps.filter((step) => step.status === 'passed').length,
    steps_total: executable.length,
    failure_count: rootFailures.length,
    skipped_count: cascaded.length,
    first_failed_step_id: first?.step_id ?? null,
    first_failed_step_title: first ? (firstStep?.title ?? first.step_id) : null,
    first_failed_step_task: first?.task ?? null,
    first_failure_message: first ? failureMessage(first) : null,
    first_failure_validations: first ? failedValidations(first) : [],
  }
}

/** The verdict of a storyboard the run could not execute at all (the agent unreachable). */
export function errorVerdict(entry: BundleEntry, message: string): StoryboardVerdict {
  const steps = entry.storyboard.phases.flatMap((phase) => phase.steps)
  return {
    storyboard_id: entry.storyboard.id,
    title: entry.storyboard.title ?? entry.storyboard.id,
    category: categoryOf(entry.storyboard),
    track: trackOf(entry.storyboard),
    status: 'failing',
    steps_passed: 0,
    steps_total: steps.length,
    failure_count: steps.length > 0 ? 1 : 0,
    skipped_count: Math.max(0, steps.length - 1),
    first_failed_step_id: steps[0]?.id ?? null,
    first_failed_step_title: steps[0] ? (steps[0].title ?? steps[0].id) : null,
    first_failed_step_task: steps[0]?.task ?? null,
    first_failure_message: message,
    first_failure_validations: [],
  }
}

/** The adcp error a response carries (`adcp_error`, else `errors[0]`). */
function adcpErrorOf(response: unknown): unknown {
  if (!response || typeof response !== 'object') return undefined
  const body = response as { adcp_error?: unknown; errors?: unknown[] }
  return body.adcp_error ?? (Array.isArray(body.errors) ? body.errors[0] : undefined)
}

/** The diagnostics of every step that ran (passed or failed), in run order. */
export function diagnosticsOf(
  runId: string,
  agentUrl: string,
  requestUrl: string,
  results: readonly StoryboardResult[],
  capturedAt: string,
): StepDiagnostic[] {
  const out: StepDiagnostic[] = []
  for (const result of results) {
    for (const step of result.steps) {
      if (step.status !== 'passed' && step.status !== 'failed') continue
      const failed = failedValidations(step)
      const adcpError = adcpErrorOf(step.response)
      out.push({
        id: crypto.randomUUID(),
        run_id: runId,
        agent_url: agentUrl,
        storyboard_id: result.storyboard_id,
        phase_id: step.phase_id,
        step_id: step.step_id,
        task: step.task,
        step_passed: step.status === 'passed',
        duration_ms: step.duration_ms,
        request_url: requestUrl,
        ...(step.request !== undefined ? { request_jsonb: step.request } : {}),
        response_status: step.http_status ?? null,
        ...(step.response !== undefined ? { response_jsonb: step.response } : {}),
        error_text: step.status === 'failed' ? failureMessage(step) : null,
        ...(adcpError !== undefined ? { adcp_error_jsonb: adcpError } : {}),
        ...(failed.length > 0 ? { failed_validations_jsonb: failed } : {}),
        served_by_agent_url: agentUrl,
        captured_at: capturedAt,
      })
    }
  }
  return out
}

/** A run's overall status, headline and tracks from its verdicts. */
export function summarize(verdicts: readonly StoryboardVerdict[]) {
  const tested = verdicts.filter((verdict) => verdict.status !== 'untested')
  const passing = tested.filter((verdict) => verdict.status === 'passing')
  const failing = tested.filter((verdict) => verdict.status === 'failing')
  const overall =
    tested.length === 0
      ? 'untested'
      : failing.length > 0
        ? 'failing'
        : passing.length === tested.length
          ? 'passing'
          : 'partial'
  const byTrack = new Map<string, StoryboardVerdict[]>()
  for (const verdict of verdicts) {
    const track = verdict.track ?? 'core'
    byTrack.set(track, [...(byTrack.get(track) ?? []), verdict])
  }
  const tracks = [...byTrack].map(([track, list]) => {
    const ran = list.filter((verdict) => verdict.status !== 'untested')
    const status =
      ran.length === 0
        ? 'skip'
        : ran.some((verdict) => verdict.status === 'failing')
          ? 'fail'
          : ran.every((verdict) => verdict.status === 'passing')
            ? 'pass'
            : 'partial'
    return {
      track,
      status,
      storyboards: list.length,
      passing: list.filter((verdict) => verdict.status === 'passing').length,
    }
  })
  const count = (status: string) => tracks.filter((track) => track.status === status).length
  const headline =
    tested.length === 0
      ? 'no storyboard applied to this agent'
      : `${passing.length} of ${tested.length} storyboards passing${
          failing.length > 0 ? `; failing: ${failing.map((verdict) => verdict.storyboard_id).join(', ')}` : ''
        }`
  return {
    overall_status: overall,
    headline,
    tracks,
    tracks_passed: count('pass'),
    tracks_failed: count('fail'),
    tracks_skipped: count('skip'),
    tracks_partial: count('partial'),
  }
}

/** The outcome status the status side records. */
export const outcomeStatus = (verdict: StoryboardVerdict): 'passed' | 'failed' | 'partial' =>
  verdict.status === 'passing' ? 'passed' : verdict.status === 'partial' ? 'partial' : 'failed'
