/**
 * The runner's result document (`adwire-storyboards-result/1`): stable, JSON-serializable, documented in the
 * package README. Field names follow `universal/runner-output-contract.yaml` where it names them.
 */

/** How a step, a storyboard or a whole run ended. */
export type Status = 'passed' | 'failed' | 'skipped' | 'not_applicable'

/** runner-output-contract.yaml `skip_result.reasons`. */
export type SkipReason =
  | 'not_applicable'
  | 'no_phases'
  | 'prerequisite_failed'
  | 'missing_tool'
  | 'missing_test_controller'
  | 'unsatisfied_contract'
  | 'peer_branch_taken'
  | 'peer_substituted'
  | 'requirement_unmet'

/** One graded validation (runner-output-contract.yaml `validation_result`). */
export interface ValidationResult {
  check: string
  id?: string
  description: string
  passed: boolean
  severity: 'required' | 'advisory'
  /** Expected vs got on a failure; an observation on a pass. */
  detail?: string
  /** Set when the check could not apply to this run (a coverage gap); it then passes. */
  not_applicable?: string
}

/** One step. */
export interface StepResult {
  phase_id: string
  step_id: string
  task: string
  status: Status
  /** Why a step was skipped or not applicable. */
  skip?: { reason: SkipReason; detail: string }
  duration_ms: number
  validations: ValidationResult[]
  /** Transport-level failure (timeout, refused connection): no validations were attempted. */
  error?: string
  /** Set when the runner completed a partial sample_request: the fields it added, where the product came from. */
  request_completion?: { fields: string[]; products_from?: string }
  /** The request sent and the response observed; always present on a failed step. */
  request?: unknown
  response?: unknown
  http_status?: number
}

/** One storyboard. */
export interface StoryboardResult {
  /** Bundle key (`protocols/creative/index`). */
  key: string
  storyboard_id: string
  title: string
  status: Status
  skip?: { reason: SkipReason; detail: string }
  duration_ms: number
  steps: StepResult[]
}

/** Counts by status. */
export interface Counts {
  passed: number
  failed: number
  skipped: number
  not_applicable: number
}

/** A whole run. */
export interface RunResult {
  format: 'adwire-storyboards-result/1'
  adcp_version: string
  agent_url: string
  protocol: 'mcp' | 'a2a'
  started_at: string
  duration_ms: number
  /** True when the run-wide deadline cut the run short (the remaining storyboards are skipped). */
  timed_out: boolean
  summary: {
    storyboards: Counts
    steps: Counts
    /** Advisory validations that failed (reported, not failing). */
    validations_advisory_failed: number
  }
  storyboards: StoryboardResult[]
}

/** Zero counts. */
export const emptyCounts = (): Counts => ({ passed: 0, failed: 0, skipped: 0, not_applicable: 0 })
