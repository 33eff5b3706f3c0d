/**
 * One compliance run performed: the storyboards run by `@adwire/storyboards` against the agent over MCP or A2A
 * through the SSRF-safe fetch, and graded into per-storyboard verdicts, per-step diagnostics and the operation's
 * answer. No database and no registry state: the run executor calls it on the compliance worker thread
 * (run-worker.ts), so the CPU a run costs (schema validation, MCP and A2A clients) stays off the request event
 * loop; the registry claims, stores and reports (runs.ts).
 */
import { agentEndpoint } from '@adwire/agent-client'
import {
  runStoryboards,
  StoryboardError,
  type Bundle,
  type BundleEntry,
  type RunResult,
  type StoryboardResult,
} from '@adwire/storyboards'
import type { AgentCredential } from './contract.js'
import { bearerFor, classifyError, type AgentProtocol } from './probe.js'
import { findStoryboard, testKitOf } from './runs-catalog.js'
import { diagnosticsOf, errorVerdict, verdictOf } from './runs-grade.js'
import type { StoredRun } from './runs-store.js'

/** What performing a run needs: all of it plain data or created where the run is performed. */
export interface PerformContext {
  /** The SSRF-safe fetch every agent exchange goes through. */
  readonly fetch: typeof fetch
  readonly bundle: Bundle
  readonly now: () => number
  /** The credential the registry holds for each agent URL the run talks to (looked up before the run). */
  readonly credentials: Readonly<Record<string, AgentCredential | undefined>>
  /** Aborted: no new exchange starts (the registry is stopping this run). */
  readonly signal: AbortSignal
  /** Per step, ms. */
  readonly stepTimeoutMs: number
  /** Whole run, ms. */
  readonly runTimeoutMs: number
}

/** An execution's fetch: refuses new exchanges once the run is aborted (the registry is stopping). */
function abortable(fetchImpl: typeof fetch, signal: AbortSignal): typeof fetch {
  return (input, init) => {
    if (signal.aborted) return Promise.reject(new Error('the registry is stopping this run'))
    return fetchImpl(input, init)
  }
}

/** The bundle with one storyboard reduced to one step (runStoryboardStep), the caller's context laid over its own. */
function singleStepBundle(
  bundle: Bundle,
  entry: BundleEntry,
  stepId: string,
  context: Record<string, unknown> | undefined,
): Bundle | undefined {
  const phase = entry.storyboard.phases.find((candidate) =>
    candidate.steps.some((step) => step.id === stepId),
  )
  const step = phase?.steps.find((candidate) => candidate.id === stepId)
  if (!phase || !step) return undefined
  const reduced: BundleEntry = {
    ...entry,
    storyboard: {
      ...entry.storyboard,
      requires_scenarios: [],
      context: { ...entry.storyboard.context, ...context },
      phases: [{ ...phase, depends_on: [], steps: [step] }],
    },
  }
  const pick = (ref: string) =>
    ref === entry.key || ref === entry.storyboard.id ? reduced : bundle.find(ref)
  return {
    dir: bundle.dir,
    version: bundle.version,
    schemasDir: bundle.schemasDir,
    entries: [reduced],
    documents: bundle.documents,
    testKits: bundle.testKits,
    find: pick,
    get: (ref) => pick(ref) ?? bundle.get(ref),
  }
}

/** Runs the storyboards with the agent's transport (the URL's, else MCP then A2A). */
async function runAgainst(
  context: PerformContext,
  agentUrl: string,
  storyboards: readonly string[] | undefined,
  runBundle: Bundle,
): Promise<{ result: RunResult; protocol: AgentProtocol; requestUrl: string }> {
  const endpoint = agentEndpoint(agentUrl)
  const credential = context.credentials[agentUrl]
  const fetchImpl = abortable(context.fetch, context.signal)
  const token = await bearerFor(credential, fetchImpl)
  const protocols: AgentProtocol[] = endpoint.protocol ? [endpoint.protocol] : ['mcp', 'a2a']
  let last: unknown
  for (const protocol of protocols) {
    try {
      const result = await runStoryboards({
        agentUrl: endpoint.base,
        protocol,
        bundle: runBundle,
        ...(storyboards && storyboards.length > 0 ? { storyboards } : {}),
        ...(token ? { auth: token } : {}),
        fetch: fetchImpl,
        stepTimeoutMs: context.stepTimeoutMs,
        runTimeoutMs: context.runTimeoutMs,
        maxResponseBytes: 4 * 1024 * 1024,
      })
      return {
        result,
        protocol,
        requestUrl: protocol === 'mcp' ? `${endpoint.base}/mcp` : endpoint.base,
      }
    } catch (error) {
      last = error
      if (!StoryboardError.is(error) || error.code !== 'connection_failed') throw error
    }
  }
  throw last
}

/** What a run found: plain data (it crosses from the worker thread to the registry). */
export interface Performed {
  readonly verdicts: ReturnType<typeof verdictOf>[]
  readonly diagnostics: ReturnType<typeof diagnosticsOf>
  readonly answer: Record<string, unknown>
  readonly error?: string
}

/**
 * Runs what `run` asks for against its agent (and the reference agent for a compare) and grades it; touches no
 * database. Throws only on a run that cannot be performed at all (an unknown step).
 *
 * @example
 * const performed = await performRun(run, { fetch, bundle: storyboardBundle(), now: Date.now, credentials: {}, signal, stepTimeoutMs: 30_000, runTimeoutMs: 600_000 })
 */
export async function performRun(run: StoredRun, context: PerformContext): Promise<Performed> {
  const full = context.bundle
  const iso = () => new Date(context.now()).toISOString()
  const target = run.options.requestedComplianceTarget
  const base = { adcp_version: full.version, requested_compliance_target: target }
  const entries = run.storyboard_ids
    .map((id) => findStoryboard(id, full))
    .filter((entry): entry is BundleEntry => entry !== undefined)
  const failedToConnect = (error: unknown): Performed => {
    const message = StoryboardError.is(error) || error instanceof Error ? error.message : String(error)
    const reason = classifyError(error, run.agent_url).message
    const verdicts = entries.map((entry) => errorVerdict(entry, message || reason))
    return {
      verdicts,
      diagnostics: [],
      answer: answerOf(run, entries[0], undefined, verdicts, [], base, message),
      error: message,
    }
  }
  if (run.trigger === 'step') {
    const entry = entries[0]!
    const reduced = singleStepBundle(full, entry, run.options.stepId ?? '', run.options.context)
    if (!reduced) throw new Error(`no step ${run.options.stepId} in ${entry.storyboard.id}`)
    let ran
    try {
      ran = await runAgainst(context, run.agent_url, [entry.key], reduced)
    } catch (error) {
      return failedToConnect(error)
    }
    const storyboard = ran.result.storyboards.find((result) => result.key === entry.key)
    const step = storyboard?.steps[0]
    const diagnostics = diagnosticsOf(
      run.id,
      run.agent_url,
      ran.requestUrl,
      storyboard ? [storyboard] : [],
      iso(),
    )
    return {
      verdicts: [],
      diagnostics,
      answer: {
        ...base,
        run_id: run.id,
        agent: { url: run.agent_url, protocol: ran.protocol },
        storyboard: { id: entry.storyboard.id, title: entry.storyboard.title ?? entry.storyboard.id },
        step: step ?? null,
        passed: step?.status === 'passed',
        dry_run: run.options.dryRun !== false,
      },
    }
  }
  if (run.trigger === 'compare') {
    const entry = entries[0]!
    const reference = run.options.reference!
    const [mine, theirs] = await Promise.allSettled([
      runAgainst(context, run.agent_url, [entry.key], full),
      runAgainst(context, reference.url, [entry.key], full),
    ])
    if (mine.status === 'rejected') return failedToConnect(mine.reason)
    const own = mine.value.result.storyboards.filter((result) => result.key === entry.key)
    const verdicts = own.map((result) => verdictOf(result, entry))
    const other =
      theirs.status === 'fulfilled'
        ? theirs.value.result.storyboards.find((result) => result.key === entry.key)
        : undefined
    const sideSummary = (result: StoryboardResult | undefined, error?: string) =>
      result ? { status: verdictOf(result, entry).status, ...countsOf(result) } : { status: 'error', error }
    return {
      verdicts,
      diagnostics: diagnosticsOf(run.id, run.agent_url, mine.value.requestUrl, own, iso()),
      answer: {
        ...base,
        storyboard: {
          id: entry.storyboard.id,
          title: entry.storyboard.title ?? entry.storyboard.id,
          category: verdicts[0]?.category ?? 'uncategorized',
        },
        user_agent: {
          url: run.agent_url,
          profile: { protocol: mine.value.protocol },
          summary: sideSummary(own[0]),
        },
        reference_agent: {
          url: reference.url,
          name: reference.name,
          ...(theirs.status === 'fulfilled' ? { profile: { protocol: theirs.value.protocol } } : {}),
          summary: sideSummary(
            other,
            theirs.status === 'rejected'
              ? String((theirs.reason as Error)?.message ?? theirs.reason)
              : undefined,
          ),
        },
        ...badge(verdicts),
        phases: comparePhases(entry, own[0], other),
        total_duration_ms: Math.max(
          mine.value.result.duration_ms,
          theirs.status === 'fulfilled' ? theirs.value.result.duration_ms : 0,
        ),
      },
    }
  }
  let ran
  try {
    ran = await runAgainst(context, run.agent_url, run.storyboard_ids, full)
  } catch (error) {
    return failedToConnect(error)
  }
  const verdicts = ran.result.storyboards.map((result) => verdictOf(result))
  const diagnostics = diagnosticsOf(run.id, run.agent_url, ran.requestUrl, ran.result.storyboards, iso())
  return {
    verdicts,
    diagnostics,
    answer: answerOf(run, entries[0], ran.result, verdicts, diagnostics, base),
  }
}

const countsOf = (result: StoryboardResult) => ({
  steps_passed: result.steps.filter((step) => step.status === 'passed').length,
  steps_failed: result.steps.filter((step) => step.status === 'failed').length,
  steps_skipped: result.steps.filter((step) => step.status === 'skipped').length,
  duration_ms: result.duration_ms,
})

/** A storyboard verdict counts for a badge only when passing (the status side decides badges). */
function badge(verdicts: ReturnType<typeof verdictOf>[]) {
  const eligible = verdicts.length > 0 && verdicts.every((verdict) => verdict.status === 'passing')
  return { badge_eligible: eligible, badge_eligible_adcp_versions: eligible ? ['3.1'] : [] }
}

/** The storyboard's phases with each step's result (annotated phases). */
function annotatedPhases(entry: BundleEntry, result: StoryboardResult | undefined) {
  return entry.storyboard.phases.map((phase) => ({
    id: phase.id,
    title: phase.title ?? phase.id,
    steps: phase.steps.map((step) => {
      const ran = result?.steps.find(
        (candidate) => candidate.phase_id === phase.id && candidate.step_id === step.id,
      )
      return {
        id: step.id,
        title: step.title ?? step.id,
        task: step.task,
        status: ran?.status ?? 'not_run',
        ...(ran?.skip ? { skip: ran.skip } : {}),
        ...(ran?.error ? { error: ran.error } : {}),
        duration_ms: ran?.duration_ms ?? 0,
        validations: ran?.validations ?? [],
      }
    }),
  }))
}

function comparePhases(
  entry: BundleEntry,
  mine: StoryboardResult | undefined,
  theirs: StoryboardResult | undefined,
) {
  const find = (result: StoryboardResult | undefined, phase: string, step: string) =>
    result?.steps.find((candidate) => candidate.phase_id === phase && candidate.step_id === step)
  return entry.storyboard.phases.map((phase) => ({
    id: phase.id,
    title: phase.title ?? phase.id,
    steps: phase.steps.map((step) => {
      const user = find(mine, phase.id, step.id)
      const reference = find(theirs, phase.id, step.id)
      return {
        id: step.id,
        title: step.title ?? step.id,
        task: step.task,
        user_status: user?.status ?? 'not_run',
        reference_status: reference?.status ?? 'not_run',
        matches: (user?.status ?? 'not_run') === (reference?.status ?? 'not_run'),
      }
    }),
  }))
}

/** The runStoryboard answer (the document's 200 shape) of a finished single-storyboard run. */
function answerOf(
  run: StoredRun,
  entry: BundleEntry | undefined,
  result: RunResult | undefined,
  verdicts: ReturnType<typeof verdictOf>[],
  diagnostics: ReturnType<typeof diagnosticsOf>,
  base: { adcp_version: string; requested_compliance_target: string },
  error?: string,
): Record<string, unknown> {
  const own = entry ? result?.storyboards.find((candidate) => candidate.key === entry.key) : undefined
  const verdict = entry
    ? verdicts.find((candidate) => candidate.storyboard_id === entry.storyboard.id)
    : undefined
  const kit = entry ? testKitOf(entry) : undefined
  return {
    ...(entry
      ? {
          storyboard: {
            id: entry.storyboard.id,
            title: entry.storyboard.title ?? entry.storyboard.id,
            category: verdict?.category ?? 'uncategorized',
            ...(typeof entry.storyboard.narrative === 'string'
              ? { narrative: entry.storyboard.narrative.trim() }
              : {}),
          },
        }
      : {}),
    agent: { url: run.agent_url, ...(result ? { profile: { protocol: result.protocol } } : {}) },
    ...base,
    ...badge(verdict ? [verdict] : []),
    run_id: run.id,
    ...(verdict
      ? {
          storyboard_status: {
            storyboard_id: verdict.storyboard_id,
            status: verdict.status,
            steps_passed: verdict.steps_passed,
            steps_total: verdict.steps_total,
            failure_count: verdict.failure_count,
            skipped_count: verdict.skipped_count,
            first_failed_step_id: verdict.first_failed_step_id,
            first_failed_step_title: verdict.first_failed_step_title,
            first_failed_step_task: verdict.first_failed_step_task,
            first_failure_message: verdict.first_failure_message,
            first_failure_validations: verdict.first_failure_validations,
          },
        }
      : {}),
    ...(entry ? { phases: annotatedPhases(entry, own) } : {}),
    summary: result
      ? { ...result.summary, storyboards_run: result.storyboards.length }
      : { error: error ?? 'not run' },
    diagnostics: diagnostics
      .filter((diagnostic) => !diagnostic.step_passed)
      .map((diagnostic) => ({
        run_id: run.id,
        agent_url: run.agent_url,
        storyboard_id: diagnostic.storyboard_id,
        phase_id: diagnostic.phase_id,
        step_id: diagnostic.step_id,
        task: diagnostic.task,
        response_status: diagnostic.response_status,
        error_text: diagnostic.error_text,
        ...(diagnostic.failed_validations_jsonb !== undefined
          ? { failed_validations_jsonb: diagnostic.failed_validations_jsonb }
          : {}),
        ...(diagnostic.adcp_error_jsonb !== undefined
          ? { adcp_error_jsonb: diagnostic.adcp_error_jsonb }
          : {}),
      })),
    total_duration_ms: result?.duration_ms ?? 0,
    ...(kit !== undefined ? { test_kit: kit } : {}),
  }
}
