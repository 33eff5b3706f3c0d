/**
 * The parts of the AdCP storyboard format (compliance bundle, `universal/storyboard-schema.yaml`) the runner
 * reads. Storyboards carry many more descriptive fields; those stay as `unknown` extras.
 */

/** One `validations[]` entry of a step (storyboard-schema.yaml, "Validation"). */
export interface Validation {
  check: string
  id?: string
  path?: string
  value?: unknown
  allowed_values?: unknown[]
  context_key?: string
  pattern?: string
  description?: string
  severity?: 'required' | 'advisory'
  [extra: string]: unknown
}

/** One `context_outputs[]` entry: capture a response value, or mint one. */
export interface ContextOutput {
  /** The variable (`key` in some 3.1.19 storyboards: the loader copies it here). */
  name: string
  path?: string
  generate?: string
}

/** `requires_capability` on a storyboard or phase: one predicate over `get_adcp_capabilities`. */
export interface CapabilityPredicate {
  path: string
  equals?: unknown
  contains?: unknown
  present?: boolean
}

/** A step's `auth:` override (storyboard-schema.yaml, "auth"). */
export type StepAuth =
  | 'none'
  | {
      type: 'api_key' | 'basic' | 'oauth_bearer'
      from_test_kit?: boolean | string
      value_strategy?: 'random_invalid' | 'random_invalid_jwt'
    }

export interface Step {
  id: string
  title?: string
  task: string
  task_default?: string
  response_schema_ref?: string
  schema_ref?: string
  sample_request?: Record<string, unknown>
  validations?: Validation[]
  context_outputs?: ContextOutput[]
  context_inputs?: { key: string; inject_at: string }[]
  expect_error?: boolean
  negative_path?: 'schema_invalid' | 'payload_well_formed'
  sample_request_skip_schema?: boolean
  omit_idempotency_key?: boolean
  requires_tool?: string
  requires_contract?: string
  stateful?: boolean
  auth?: StepAuth
  contributes?: boolean
  contributes_to?: string
  contributes_if?: string
  triggered_by?: string
  filter?: { body?: Record<string, unknown>; [extra: string]: unknown }
  timeout_seconds?: number
  [extra: string]: unknown
}

export interface Phase {
  id: string
  title?: string
  optional?: boolean
  skip_if?: string
  requires_capability?: CapabilityPredicate
  depends_on?: string[]
  branch_set?: { id: string; semantics?: string }
  steps: Step[]
}

export interface Storyboard {
  id: string
  title?: string
  version?: string
  summary?: string
  required_tools?: string[]
  required_any_of_tools?: { tools: string[]; rationale?: string }[]
  requires?: string[]
  requires_capability?: CapabilityPredicate
  requires_scenarios?: string[]
  prerequisites?: { test_kit?: string; controller_seeding?: boolean; description?: string }
  fixtures?: Record<string, Record<string, unknown>[]>
  context?: Record<string, unknown>
  phases: Phase[]
  [extra: string]: unknown
}

/** A test kit of the bundle (`test-kits/*.yaml`): a brand kit or a runner contract. */
export type TestKit = Record<string, unknown> & { id?: string }
