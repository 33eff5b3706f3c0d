/**
 * Runs a storyboard's steps, one at a time and in order, against an agent: resolves the placeholders of the
 * step's `sample_request`, checks the request against its `schema_ref` (a runner-side guard), calls the task,
 * grades every validation and captures the step's `context_outputs` for later steps.
 */
import { randomUUID } from 'node:crypto'
import { officialErrors } from '../testing/official.js'
import { errorCodeOf, runCheck, type CheckResult } from './checks.js'
import { resolvePath } from './path.js'
import { substitute, type SubstitutionScope } from './substitute.js'
import type { TaskCaller, TaskResponse } from './transport.js'
import type { Phase, Step, Storyboard, Validation } from './types.js'

/** The graded result of one step. */
export interface StepOutcome {
  storyboard: string
  phase: string
  step: string
  task: string
  request: Record<string, unknown>
  response: TaskResponse
  results: CheckResult[]
  /** Required validations (and captures) that failed: the step fails when this is not empty. */
  failures: CheckResult[]
  /** Advisory validations that failed; reported, not failing. */
  advisories: CheckResult[]
}

/** Whether a step's request is schema-checked before sending (storyboard-schema.yaml, `negative_path`). */
function requestIsSchemaValid(step: Step): boolean {
  if (step.sample_request_skip_schema === true) return false
  if (step.expect_error === true) return step.negative_path === 'payload_well_formed'
  return true
}

/** Renders a failed step as one readable message (storyboard, step, expected vs got). */
export function describeFailures(outcome: StepOutcome): string {
  const lines = outcome.failures.map(
    (failure) =>
      `  - ${failure.check}${failure.description ? ` (${failure.description})` : ''}: ${failure.detail ?? 'failed'}`,
  )
  const code = errorCodeOf(outcome.response.body)
  const got = code
    ? `the agent answered with error ${code}: ${JSON.stringify(outcome.response.body).slice(0, 400)}`
    : `the agent answered ${outcome.response.transportError ? 'a transport error' : 'success'}: ${JSON.stringify(outcome.response.body ?? outcome.response.raw).slice(0, 400)}`
  return [
    `${outcome.storyboard} › ${outcome.phase} › ${outcome.step} (${outcome.task} over ${outcome.response.transport}):`,
    ...lines,
    `  ${got}`,
  ].join('\n')
}

/** One run of one storyboard: its context accumulator and generated values. */
export class StoryboardRun {
  readonly scope: SubstitutionScope

  constructor(
    readonly storyboard: Storyboard,
    private readonly caller: TaskCaller,
    agentUrl: string,
  ) {
    this.scope = { agentUrl, context: new Map(), generated: new Map(), responses: new Map() }
    // `generate` outputs are minted once per run, at run start.
    for (const phase of storyboard.phases) {
      for (const step of phase.steps) {
        for (const output of step.context_outputs ?? []) {
          if (output.generate !== undefined) {
            if (output.generate !== 'uuid_v4' && output.generate !== 'opaque_id') {
              throw new Error(`${storyboard.id}/${step.id}: unknown generator ${output.generate}`)
            }
            this.scope.context.set(output.name, randomUUID())
          }
        }
      }
    }
  }

  /** The phase and step with these ids. */
  find(phaseId: string, stepId: string): { phase: Phase; step: Step } {
    const phase = this.storyboard.phases.find((candidate) => candidate.id === phaseId)
    const step = phase?.steps.find((candidate) => candidate.id === stepId)
    if (!phase || !step) throw new Error(`${this.storyboard.id}: no step ${phaseId}/${stepId}`)
    return { phase, step }
  }

  /** Runs one step; throws when the runner cannot run it (unresolved placeholder, unsupported check). */
  async runStep(phaseId: string, stepId: string): Promise<StepOutcome> {
    const { step } = this.find(phaseId, stepId)
    if (typeof step.requires_contract === 'string') {
      throw new Error(
        `runner: step ${stepId} needs the ${step.requires_contract} contract, which this runner does not provide`,
      )
    }
    if (/^(expect_|assert_)/.test(step.task)) {
      throw new Error(`runner: ${step.task} is a runner-side assertion step this runner does not implement`)
    }
    const request = substitute(step.sample_request ?? {}, this.scope)
    if (step.schema_ref && requestIsSchemaValid(step)) {
      const errors = officialErrors(step.schema_ref, request)
      if (errors.length) {
        throw new Error(
          `runner: the substituted sample_request does not match ${step.schema_ref}: ${errors.join('; ')}`,
        )
      }
    }
    const validations = substitute(step.validations ?? [], this.scope) as Validation[]
    const response = await this.caller.call(step.task, request)
    const input = {
      body: response.body,
      responseSchemaRef: step.response_schema_ref,
      context: this.scope.context,
    }
    const results = validations.map((validation) => runCheck(validation, input))
    const failed = results.filter((result) => !result.passed)
    const failures = failed.filter((result) => !result.advisory)
    if (failures.length === 0) {
      for (const output of step.context_outputs ?? []) {
        if (output.path === undefined) continue
        const value = resolvePath(response.body, output.path)
        if (value === undefined || value === null || value === '') {
          failures.push({
            check: 'capture_path_not_resolvable',
            description: `context_outputs ${output.name}`,
            passed: false,
            advisory: false,
            detail: `expected a value at ${output.path}, got ${value === undefined ? 'absent' : JSON.stringify(value)}`,
          })
        } else {
          this.scope.context.set(output.name, value)
        }
      }
    }
    if (failures.length === 0 && response.body) this.scope.responses.set(step.id, response.body)
    return {
      storyboard: this.storyboard.id,
      phase: phaseId,
      step: stepId,
      task: step.task,
      request,
      response,
      results,
      failures,
      advisories: failed.filter((result) => result.advisory),
    }
  }
}
