/**
 * Runs one storyboard: the storyboard-level gates, fixture seeding through `comply_test_controller`
 * (`prerequisites.controller_seeding`), then the phases in order with `requires_capability`, `skip_if`, the
 * stateful cascade (`depends_on`, runner-output-contract.yaml `cascade_rules`) and optional/branch-set phases.
 */
import { capabilityGate, storyboardGate, type Gate } from './applicability.js'
import type { BundleEntry } from './bundle.js'
import { evaluateExpression, parseExpression } from './expression.js'
import type { StepResult, StoryboardResult } from './result.js'
import { RunContext, type RunEnvironment } from './run-context.js'
import { runStep } from './step-run.js'
import type { TestKit } from './types.js'

/** runner-output-contract.yaml: skips that leave state missing, and so trip the cascade. */
const MISSING_STATE = new Set([
  'missing_tool',
  'missing_test_controller',
  'prerequisite_failed',
  'unsatisfied_contract',
])

/**
 * Fixture kinds in the seeding order of the foreign-key DAG, with their seed scenario and the id fields lifted
 * into `params` (storyboard-schema.yaml `fixtures`; comply-test-controller-request.json `params`): every other
 * field of an entry rides in `params.fixture`, as the seed scenarios read it.
 */
const SEED_ORDER: readonly [kind: string, scenario: string, ids: readonly string[]][] = [
  ['accounts', 'seed_account', ['account_id']],
  ['products', 'seed_product', ['product_id']],
  ['pricing_options', 'seed_pricing_option', ['product_id', 'pricing_option_id']],
  ['creative_formats', 'seed_creative_format', ['format_id']],
  ['creatives', 'seed_creative', ['creative_id']],
  ['plans', 'seed_plan', ['plan_id']],
  ['media_buys', 'seed_media_buy', ['media_buy_id']],
]

/**
 * The `params` of one seed call: the entry's id fields, and the rest as `fixture` (an entry that already nests
 * its payload under `fixture`, as the schema's account example does, keeps it).
 */
export function seedParams(entry: Record<string, unknown>, ids: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {}
  const rest: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entry)) (ids.includes(key) ? params : rest)[key] = value
  const nested = Object.keys(rest).length === 1 && typeof rest.fixture === 'object' && rest.fixture !== null
  params.fixture = nested ? rest.fixture : rest
  return params
}

function skippedAll(entry: BundleEntry, gate: Gate): StepResult[] {
  return entry.storyboard.phases.flatMap((phase) =>
    phase.steps.map((step) => ({
      phase_id: phase.id,
      step_id: step.id,
      task: step.task,
      status: gate.reason === 'not_applicable' ? ('not_applicable' as const) : ('skipped' as const),
      skip: gate,
      duration_ms: 0,
      validations: [],
    })),
  )
}

async function seed(run: RunContext, entry: BundleEntry): Promise<Gate | undefined> {
  const { storyboard } = entry
  if (!storyboard.prerequisites?.controller_seeding || !storyboard.fixtures) return undefined
  if (!run.profile.tasks.has('comply_test_controller')) return undefined
  for (const [kind, scenario, ids] of SEED_ORDER) {
    for (const fixture of storyboard.fixtures[kind] ?? []) {
      // The runner MUST assert a sandbox account on every controller request (comply-test-controller-request.json).
      const answer = await run.env.caller.call(
        'comply_test_controller',
        { scenario, params: seedParams(fixture, ids), account: { sandbox: true } },
        run.env.stepTimeoutMs,
      )
      const code = (answer.body?.error ??
        (answer.body?.adcp_error as { code?: string } | undefined)?.code) as string | undefined
      if (code === 'UNKNOWN_SCENARIO') {
        return {
          reason: 'not_applicable',
          detail: `fixture_seed_unsupported: the controller does not implement ${scenario}`,
        }
      }
      if (answer.transportError || answer.body?.success === false) {
        return {
          reason: 'prerequisite_failed',
          detail: `seeding ${kind} with ${scenario} failed: ${JSON.stringify(answer.body ?? answer.error).slice(0, 300)}`,
        }
      }
    }
  }
  return undefined
}

/**
 * Runs one storyboard against the agent of `env`.
 * @example const result = await runStoryboard(bundle.get('capability_discovery'), env, testKit, deadline)
 */
export async function runStoryboard(
  entry: BundleEntry,
  env: RunEnvironment,
  testKit: TestKit,
  deadline: number,
): Promise<StoryboardResult> {
  const started = performance.now()
  const { storyboard } = entry
  const inOptionalPhase = new Set<StepResult>()
  const finish = (steps: StepResult[], gate?: Gate): StoryboardResult => {
    const failed = steps.some((step) => step.status === 'failed' && !inOptionalPhase.has(step))
    const passed = steps.some((step) => step.status === 'passed')
    const status = gate
      ? gate.reason === 'not_applicable'
        ? 'not_applicable'
        : 'skipped'
      : failed
        ? 'failed'
        : passed
          ? 'passed'
          : 'skipped'
    return {
      key: entry.key,
      storyboard_id: storyboard.id,
      title: storyboard.title ?? storyboard.id,
      status,
      ...(gate ? { skip: gate } : {}),
      duration_ms: Math.round(performance.now() - started),
      steps,
    }
  }
  const gate = storyboardGate(entry, env.profile)
  if (gate) return finish(skippedAll(entry, gate), gate)

  const context = new Map<string, unknown>(Object.entries(storyboard.context ?? {}))
  const run = new RunContext(env, {
    agentUrl: env.agentUrl,
    context,
    generated: new Map(),
    responses: new Map(),
    testKit,
    ...(env.webhooks
      ? { webhookUrl: (id: string) => env.webhooks!.urlFor(id), webhookBase: env.webhooks.base }
      : {}),
  })
  for (const phase of storyboard.phases) {
    for (const step of phase.steps) {
      for (const output of step.context_outputs ?? []) {
        if (output.generate !== undefined) context.set(output.name, crypto.randomUUID())
        else run.producers.set(output.name, step.id)
      }
    }
  }
  for (const phase of storyboard.phases) {
    for (const step of phase.steps) {
      if (step.task === 'expect_webhook_retry_keys_stable' && step.triggered_by && env.webhooks) {
        const trigger = (step.retry_trigger ?? {}) as { count?: number; http_status?: number }
        env.webhooks.failFirst(step.triggered_by, trigger.count ?? 3, trigger.http_status ?? 503)
      }
    }
  }
  const seeding = await seed(run, entry)
  if (seeding) return finish(skippedAll(entry, seeding), seeding)

  const steps: StepResult[] = []
  const tripped = new Map<string, string>() // phase id → the step that tripped it
  const phaseIds: string[] = []
  for (const phase of storyboard.phases) {
    const upstream = (phase.depends_on ?? phaseIds).filter((id) => {
      const peer = storyboard.phases.find((candidate) => candidate.id === id)
      return !(phase.branch_set && peer?.branch_set?.id === phase.branch_set.id)
    })
    phaseIds.push(phase.id)
    let phaseGate = phase.requires_capability
      ? capabilityGate(phase.requires_capability, env.profile.capabilities)
      : undefined
    if (
      !phaseGate &&
      phase.skip_if &&
      evaluateExpression(parseExpression(phase.skip_if), { context, testKit })
    ) {
      phaseGate = { reason: 'not_applicable', detail: `skip_if: ${phase.skip_if}` }
    }
    if (phase.steps.length === 0) {
      steps.push({
        phase_id: phase.id,
        step_id: phase.id,
        task: 'synthesized',
        status: 'skipped',
        skip: {
          reason: 'unsatisfied_contract',
          detail: `the phase's steps are synthesized by a runner contract (${storyboard.prerequisites?.test_kit ?? 'test kit'}) this runner does not implement`,
        },
        duration_ms: 0,
        validations: [],
      })
      continue
    }
    let trippedBy = upstream.map((id) => tripped.get(id)).find((step) => step !== undefined)
    for (const step of phase.steps) {
      const stepStarted = performance.now()
      let result: Omit<StepResult, 'phase_id' | 'step_id' | 'duration_ms'>
      if (phaseGate) {
        result = {
          task: step.task,
          status: phaseGate.reason === 'not_applicable' ? 'not_applicable' : 'skipped',
          skip: phaseGate,
          validations: [],
        }
      } else if (performance.now() > deadline) {
        result = {
          task: step.task,
          status: 'skipped',
          skip: { reason: 'requirement_unmet', detail: 'the run deadline passed' },
          validations: [],
        }
      } else if (step.stateful && trippedBy) {
        result = {
          task: step.task,
          status: 'skipped',
          skip: { reason: 'prerequisite_failed', detail: `step ${trippedBy} did not pass` },
          validations: [],
        }
      } else {
        result = await runStep(phase, step, run)
      }
      run.outcomes.set(step.id, result.status)
      const missing = result.status === 'failed' || (result.skip && MISSING_STATE.has(result.skip.reason))
      if (step.stateful && missing && !phaseGate) {
        trippedBy ??= step.id
        if (!tripped.has(phase.id)) tripped.set(phase.id, step.id)
      }
      const stepResult: StepResult = {
        phase_id: phase.id,
        step_id: step.id,
        ...result,
        duration_ms: Math.round(performance.now() - stepStarted),
      }
      if (phase.optional) inOptionalPhase.add(stepResult)
      steps.push(stepResult)
    }
  }
  return finish(steps)
}
