/**
 * Runs one task step of a storyboard: resolves the task and its placeholders, gates it (requires_contract,
 * requires_tool, the advertised tools), checks the request against its `schema_ref`, calls the agent, grades
 * every validation, and captures the step's `context_outputs`.
 */
import { isErrorAnswer, jsonEqual } from './checks.js'
import { completedTaskSchema, completeRequest } from './complete-request.js'
import { conventionalCaptures } from './conventional-captures.js'
import { gradeValidation } from './grade.js'
import { resolvePath } from './path.js'
import type { StepResult, ValidationResult } from './result.js'
import type { RunContext } from './run-context.js'
import { substitute, UnresolvedSubstitution } from './substitute.js'
import { taskCompletion, TASK_COMPLETION_PREFIX, type Completion } from './task-completion.js'
import type { Phase, Step, Validation } from './types.js'
import { HTTP_TASKS, runHttpStep } from './http-steps.js'
import { runWebhookStep, WEBHOOK_TASKS } from './webhook-steps.js'

/** Runner-side tasks (assertions the runner evaluates itself, not agent tasks). */
const RUNNER_TASKS = new Set([
  'assert_contribution',
  ...WEBHOOK_TASKS,
  ...HTTP_TASKS,
  'expect_substitution_safe',
  'expect_rate_limit_not_replayed',
  'replay_webhook_vector',
])

type Partial = Omit<StepResult, 'phase_id' | 'step_id' | 'duration_ms'>

const skipped = (
  task: string,
  reason: NonNullable<StepResult['skip']>['reason'],
  detail: string,
): Partial => ({
  task,
  status: reason === 'not_applicable' ? 'not_applicable' : 'skipped',
  skip: { reason, detail },
  validations: [],
})

/** Resolves `$test_kit.…` task references (falling back on `task_default`). */
function taskName(step: Step, run: RunContext): string | undefined {
  if (!step.task.startsWith('$test_kit.')) return step.task
  const value = resolvePath(run.scope.testKit, step.task.slice('$test_kit.'.length))
  return typeof value === 'string' ? value : step.task_default
}

function requestIsSchemaValid(step: Step): boolean {
  if (step.sample_request_skip_schema === true) return false
  if (step.expect_error === true) return step.negative_path === 'payload_well_formed'
  return true
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.replace(/\[(\d+)\]/g, '.$1').split('.')
  let cursor: Record<string, unknown> = target
  keys.forEach((key, index) => {
    if (index === keys.length - 1) cursor[key] = value
    else {
      if (cursor[key] === null || typeof cursor[key] !== 'object')
        cursor[key] = /^\d+$/.test(keys[index + 1]!) ? [] : {}
      cursor = cursor[key] as Record<string, unknown>
    }
  })
}

const synthesized = (
  check: string,
  description: string,
  passed: boolean,
  detail?: string,
): ValidationResult => ({
  check,
  description,
  passed,
  severity: 'required',
  ...(detail ? { detail } : {}),
})

async function grade(validations: Validation[], input: Parameters<typeof gradeValidation>[1]) {
  const results: ValidationResult[] = []
  for (const validation of validations) {
    const verdict = await gradeValidation(validation, input)
    results.push({
      check: validation.check,
      ...(validation.id ? { id: validation.id } : {}),
      description: validation.description ?? validation.check,
      passed: verdict.passed,
      severity: validation.severity === 'advisory' ? 'advisory' : 'required',
      ...(verdict.detail ? { detail: verdict.detail } : {}),
      ...(verdict.notApplicable ? { not_applicable: verdict.notApplicable } : {}),
    })
  }
  return results
}

/**
 * Runs one step and returns its result (without phase/step ids and duration, which the caller adds).
 * @example const partial = await runStep(phase, step, run)
 */
export async function runStep(phase: Phase, step: Step, run: RunContext): Promise<Partial> {
  const task = taskName(step, run)
  if (task === undefined)
    return skipped(
      step.task,
      'not_applicable',
      `${step.task} is not set by the test kit and the step has no task_default`,
    )
  if (step.requires_contract && !run.profile.contracts.has(step.requires_contract)) {
    return skipped(
      task,
      'unsatisfied_contract',
      `the step needs the ${step.requires_contract} contract, which is not in scope for this run`,
    )
  }
  run.tasks.set(step.id, task)
  if (WEBHOOK_TASKS.has(task)) return runWebhookStep(step, task, run)
  if (HTTP_TASKS.has(task)) {
    return runHttpStep(step, task, run, (validations, response) =>
      grade(validations, run.gradeInput({}, response)),
    )
  }
  if (task === 'assert_contribution') {
    const validations = await grade(step.validations ?? [], run.gradeInput({}, undefined))
    return {
      task,
      status: validations.some((v) => !v.passed && v.severity === 'required') ? 'failed' : 'passed',
      validations,
    }
  }
  if (RUNNER_TASKS.has(task)) {
    return skipped(
      task,
      'unsatisfied_contract',
      `${task} is a runner-side assertion this runner does not implement`,
    )
  }
  if (step.requires_tool && !run.profile.tasks.has(step.requires_tool)) {
    return skipped(task, 'missing_tool', `the agent does not advertise ${step.requires_tool}`)
  }
  if (!run.profile.tasks.has(task)) {
    return task === 'comply_test_controller'
      ? skipped(task, 'missing_test_controller', 'the agent does not advertise comply_test_controller')
      : skipped(
          task,
          'missing_tool',
          `the agent does not advertise ${task} (it offers ${[...run.profile.tasks].sort().join(', ')})`,
        )
  }
  let request: Record<string, unknown>
  let validations: Validation[]
  try {
    request = substitute(step.sample_request ?? {}, run.scope)
    validations = substitute(step.validations ?? [], run.scope)
  } catch (error) {
    if (!(error instanceof UnresolvedSubstitution)) throw error
    const producer = error.contextName ? run.producers.get(error.contextName) : undefined
    if (producer && run.outcomes.get(producer) !== 'passed') {
      return skipped(
        task,
        'prerequisite_failed',
        `${error.token} comes from step ${producer}, which did not pass`,
      )
    }
    return {
      task,
      status: 'failed',
      validations: [
        synthesized(
          'unresolved_substitution',
          `substitution ${error.token}`,
          false,
          `${error.token} has no value in this run`,
        ),
      ],
      request: null,
      response: null,
    }
  }
  for (const input of step.context_inputs ?? []) {
    if (run.scope.context.has(input.key)) setPath(request, input.inject_at, run.scope.context.get(input.key))
  }
  const completed = await completeRequest(task, step, request, run)
  if (completed && 'problem' in completed) {
    return {
      task,
      status: 'failed',
      validations: [
        synthesized(
          'request_completion',
          'runner: the partial sample_request is completed before it is sent',
          false,
          completed.problem,
        ),
      ],
      request,
    }
  }
  if (completed) request = completed.request
  const completion = completed ? { request_completion: completed.completion } : {}
  // A `$test_kit.schemas.…` ref the kit does not set leaves a completed request to its task's official schema.
  const schemaRef =
    step.schema_ref && run.schemas?.has(step.schema_ref)
      ? step.schema_ref
      : completed
        ? completedTaskSchema(task)
        : undefined
  if (schemaRef && requestIsSchemaValid(step) && run.schemas?.has(schemaRef)) {
    const errors = run.schemas.errors(schemaRef, request)
    if (errors.length) {
      return {
        task,
        status: 'failed',
        validations: [
          synthesized(
            'request_schema',
            `runner: the substituted sample_request must match ${schemaRef}`,
            false,
            errors.slice(0, 8).join('; '),
          ),
        ],
        request,
        ...completion,
      }
    }
  }
  const response = await run.call(task, request, step)
  const base = {
    task,
    ...completion,
    request,
    response: response.body ?? response.raw ?? null,
    ...(response.http ? { http_status: response.http.status } : {}),
  }
  // No AdCP answer and no HTTP refusal to grade (timeout, refused connection, a body over the cap): a transport
  // failure of the step. An HTTP 4xx/5xx without a body is an answer the status checks grade.
  if (response.error && !response.body && (response.http?.status ?? 200) < 400) {
    return { ...base, status: 'failed', validations: [], error: response.error }
  }
  const results = await grade(validations, run.gradeInput(request, response, step.response_schema_ref))
  const isError = response.transportError || isErrorAnswer(response.body)
  if (step.expect_error === true && !isError && response.body) {
    results.push(
      synthesized(
        'expect_error',
        'the step expects an error response',
        false,
        `expected an error, got success: ${JSON.stringify(response.body).slice(0, 200)}`,
      ),
    )
  }
  if (request.context !== undefined && response.body && !response.error) {
    const echoed = response.body.context
    const ok = jsonEqual(echoed, request.context)
    results.push(
      synthesized(
        'context_echo',
        'the response echoes the request context verbatim (storyboard-schema.yaml, "Context echo contract")',
        ok,
        ok
          ? undefined
          : `expected context ${JSON.stringify(request.context)}, got ${echoed === undefined ? 'absent' : JSON.stringify(echoed)}`,
      ),
    )
  }
  let failed = results.some((result) => !result.passed && result.severity === 'required')
  if (!failed) {
    for (const [name, value] of conventionalCaptures(task, response.body)) run.scope.context.set(name, value)
    let completion: Completion | undefined
    for (const output of step.context_outputs ?? []) {
      if (output.path === undefined) continue
      let value: unknown
      let why: string | undefined
      if (output.path.startsWith(TASK_COMPLETION_PREFIX)) {
        completion ??= await taskCompletion(run, response.body, step)
        if ('result' in completion)
          value = resolvePath(completion.result, output.path.slice(TASK_COMPLETION_PREFIX.length))
        else why = completion.problem
      } else value = resolvePath(response.body, output.path)
      if (value === undefined || value === null || value === '') {
        results.push(
          synthesized(
            'capture_path_not_resolvable',
            `context_outputs ${output.name}`,
            false,
            `expected a value at ${output.path}, got ${value === undefined ? 'absent' : JSON.stringify(value)}${why ? ` (${why})` : ''}`,
          ),
        )
        failed = true
      } else run.scope.context.set(output.name, value)
    }
  }
  if (!failed && response.body) run.scope.responses.set(step.id, response.body)
  if (!failed) run.contribute(phase, step)
  return { ...base, status: failed ? 'failed' : 'passed', validations: results }
}
