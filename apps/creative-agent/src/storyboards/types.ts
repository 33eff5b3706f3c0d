/**
 * The parts of the AdCP storyboard format (compliance bundle, `universal/storyboard-schema.yaml`) that the
 * runner reads. Storyboards carry many more descriptive fields; those are kept as `unknown` extras.
 */

/** One `validations[]` entry of a step. */
export interface Validation {
  check: string
  path?: string
  value?: unknown
  allowed_values?: unknown[]
  context_key?: string
  description?: string
  severity?: 'required' | 'advisory'
  [extra: string]: unknown
}

/** One `context_outputs[]` entry: capture a response value, or mint one. */
export interface ContextOutput {
  name: string
  path?: string
  generate?: string
}

/** `requires_capability` on a storyboard or phase. */
export interface CapabilityPredicate {
  path: string
  equals?: unknown
  contains?: unknown
  present?: boolean
}

export interface Step {
  id: string
  title?: string
  task: string
  response_schema_ref?: string
  schema_ref?: string
  sample_request?: Record<string, unknown>
  validations?: Validation[]
  context_outputs?: ContextOutput[]
  expect_error?: boolean
  negative_path?: 'schema_invalid' | 'payload_well_formed'
  omit_idempotency_key?: boolean
  requires_tool?: string
  requires_contract?: string
  stateful?: boolean
  [extra: string]: unknown
}

export interface Phase {
  id: string
  title?: string
  optional?: boolean
  skip_if?: string
  requires_capability?: CapabilityPredicate
  steps: Step[]
}

export interface Storyboard {
  id: string
  title?: string
  required_tools?: string[]
  requires?: string[]
  requires_capability?: CapabilityPredicate
  phases: Phase[]
  [extra: string]: unknown
}
