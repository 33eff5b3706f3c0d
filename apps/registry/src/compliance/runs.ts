/**
 * Compliance runs as jobs. A run is stored `queued` the moment it is asked for (its id answered at once), claimed
 * by an instance (`running`, with a lease it renews), executed by `@adwire/storyboards` against the agent over
 * MCP or A2A through the SSRF-safe fetch, and finished in one transaction with its per-storyboard verdicts and
 * per-step diagnostics; each finished storyboard is then reported to the {@link ComplianceOutcomeSink}.
 *
 * Restarts: a graceful stop puts the runs it was executing back in the queue (the attempt not counted) and the
 * next start runs them again. A run left `running` by a crashed instance is recovered once its lease has expired
 * (at start and on every sweep): it is **resumed — run again from its first step** — while it has attempts left
 * (2 in all), and **marked failed** (`error: interrupted`) after that, so an agent that crashes the registry
 * cannot loop it. Storyboards mint fresh idempotency keys per run, so a re-run is a clean run.
 */
import {
  runStoryboards,
  StoryboardError,
  type Bundle,
  type BundleEntry,
  type RunResult,
  type StoryboardResult,
} from '@adwire/storyboards'
import type { AgentCredentialSource, ComplianceOutcomeSink, ComplianceRunLauncher } from './contract.js'
import { agentEndpoint, bearerFor, classifyError, type AgentProtocol } from './probe.js'
import { findStoryboard, storyboardBundle, testKitOf } from './runs-catalog.js'
import { diagnosticsOf, errorVerdict, outcomeStatus, summarize, verdictOf } from './runs-grade.js'
import {
  runStore,
  type RunOptions,
  type RunStore,
  type RunTrigger,
  type StoredRun,
  type StoredVerdict,
} from './runs-store.js'
import type { SqlDriver } from '../db/driver.js'

export interface ComplianceRunsOptions {
  readonly driver: SqlDriver
  /** The SSRF-safe fetch every agent exchange goes through. */
  readonly fetch: typeof fetch
  readonly now: () => number
  readonly log: (entry: Record<string, unknown>) => void
  readonly outcomes?: ComplianceOutcomeSink
  readonly credentials?: AgentCredentialSource
  /** The agent compareStoryboard runs beside the caller's. */
  readonly reference?: { readonly url: string; readonly name: string }
  /** Runs executed at once by this instance. Default 2. */
  readonly concurrency?: number
  /** How long a claimed run stays this instance's without a renewal, ms. Default 60,000. */
  readonly leaseMs?: number
  /** Attempts of a run across restarts. Default 2. */
  readonly maxAttempts?: number
  /** Per step, ms. Default 30,000. */
  readonly stepTimeoutMs?: number
  /** Whole run, ms. Default 600,000. */
  readonly runTimeoutMs?: number
  readonly bundle?: Bundle
}

/** What a caller asks for. */
export interface RunRequest {
  readonly agentUrl: string
  readonly orgId?: string
  readonly trigger: RunTrigger
  /** Storyboard ids or keys; empty: every storyboard of the bundle (the runner skips those that do not apply). */
  readonly storyboardIds: readonly string[]
  readonly options?: Partial<RunOptions>
}

export interface ComplianceRuns extends ComplianceRunLauncher {
  readonly store: RunStore
  /** Stores the run `queued` and starts it when a slot is free; resolves at once. */
  submit(request: RunRequest): Promise<StoredRun>
  /** The run once finished, or as it stands after `timeoutMs`. */
  wait(id: string, timeoutMs: number): Promise<StoredRun | undefined>
  /** Recovers runs whose lease expired and starts the queue. */
  start(): Promise<void>
  /** Stops executing; runs in flight go back to the queue. */
  close(): Promise<void>
  /** Resolves when nothing is executing or queued on this instance (tests). */
  idle(): Promise<void>
}

const FINISHED = new Set(['completed', 'failed'])
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref?.())

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

/**
 * @example
 * const runs = createComplianceRuns({ driver, fetch: createAgentFetch(policy), now: Date.now, log: console.log })
 * await runs.start()
 * const run = await runs.submit({ agentUrl: 'https://creative.example/mcp', trigger: 'manual', storyboardIds: ['capability_discovery'] })
 * const finished = await runs.wait(run.id, 60_000)
 */
export function createComplianceRuns(options: ComplianceRunsOptions): ComplianceRuns {
  const store = runStore(options.driver)
  const bundle = () => options.bundle ?? storyboardBundle()
  const concurrency = options.concurrency ?? 2
  const leaseMs = options.leaseMs ?? 60_000
  const maxAttempts = options.maxAttempts ?? 2
  const iso = (ms = options.now()) => new Date(ms).toISOString()
  const executing = new Map<string, { controller: AbortController; done: Promise<void> }>()
  const waiters = new Map<string, Set<() => void>>()
  let closing = false
  let pumping = false
  let again = false
  let sweepTimer: ReturnType<typeof setInterval> | undefined

  const notify = (id: string) => {
    for (const wake of waiters.get(id) ?? []) wake()
    waiters.delete(id)
  }

  /** Runs the storyboards with the agent's transport (the URL's, else MCP then A2A). */
  async function runAgainst(
    agentUrl: string,
    storyboards: readonly string[] | undefined,
    runBundle: Bundle,
    signal: AbortSignal,
    orgId?: string,
  ): Promise<{ result: RunResult; protocol: AgentProtocol; requestUrl: string }> {
    const endpoint = agentEndpoint(agentUrl)
    // The run's organization's own credential; the registry's runs present the controller's.
    const credential = await options.credentials?.credentialFor(agentUrl, orgId)
    const fetchImpl = abortable(options.fetch, signal)
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
          stepTimeoutMs: options.stepTimeoutMs ?? 30_000,
          runTimeoutMs: options.runTimeoutMs ?? 600_000,
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

  async function execute(run: StoredRun, controller: AbortController): Promise<void> {
    const started = options.now()
    const renew = setInterval(
      () => {
        store.renewLease(run.id, iso(options.now() + leaseMs)).catch(() => {})
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    )
    renew.unref?.()
    try {
      const outcome = await perform(run, controller.signal)
      if (controller.signal.aborted) return // released by close(): the next start runs it again
      const finishedAt = iso()
      const verdicts: StoredVerdict[] = outcome.verdicts.map((verdict) => ({
        ...verdict,
        run_id: run.id,
        agent_url: run.agent_url,
        adcp_version: bundle().version,
        requested_compliance_target: run.options.requestedComplianceTarget,
        tested_at: finishedAt,
      }))
      const summary = summarize(outcome.verdicts)
      const stored = await store.finish(
        run.id,
        {
          state: outcome.error ? 'failed' : 'completed',
          overall_status: outcome.error ? 'error' : summary.overall_status,
          headline: outcome.error ? `the run could not reach the agent: ${outcome.error}` : summary.headline,
          tracks_passed: summary.tracks_passed,
          tracks_failed: summary.tracks_failed,
          tracks_skipped: summary.tracks_skipped,
          tracks_partial: summary.tracks_partial,
          tracks: summary.tracks,
          result: { ...outcome.answer, run_id: run.id },
          error: outcome.error ?? null,
          adcp_version: bundle().version,
          total_duration_ms: options.now() - started,
          finished_at: finishedAt,
        },
        verdicts,
        outcome.diagnostics.map((diagnostic) => ({ ...diagnostic, captured_at: finishedAt })),
      )
      if (stored) await report(run, verdicts, outcome.error, finishedAt)
      else options.log({ compliance_run: run.id, dropped: 'another instance took the run over' })
    } catch (error) {
      if (controller.signal.aborted) return
      options.log({ compliance_run: run.id, error: String(error instanceof Error ? error.stack : error) })
      await store
        .finish(
          run.id,
          {
            state: 'failed',
            overall_status: 'error',
            headline: 'the run failed inside the registry',
            tracks_passed: 0,
            tracks_failed: 0,
            tracks_skipped: 0,
            tracks_partial: 0,
            tracks: [],
            result: undefined,
            error: error instanceof Error ? error.message : String(error),
            adcp_version: bundle().version,
            total_duration_ms: options.now() - started,
            finished_at: iso(),
          },
          [],
          [],
        )
        .catch(() => {})
    } finally {
      clearInterval(renew)
      notify(run.id)
    }
  }

  /** Reports each finished storyboard once (a dry-run step reports nothing). */
  async function report(
    run: StoredRun,
    verdicts: readonly StoredVerdict[],
    error: string | undefined,
    finishedAt: string,
  ): Promise<void> {
    if (!options.outcomes || (run.trigger === 'step' && run.options.dryRun !== false)) return
    for (const verdict of verdicts) {
      if (verdict.status === 'untested') continue
      const failedSteps = verdict.status === 'passing' ? 0 : verdict.failure_count
      try {
        await options.outcomes.record({
          runId: run.id,
          agentUrl: run.agent_url,
          storyboardId: verdict.storyboard_id,
          adcpVersion: bundle().version,
          status: error ? 'error' : outcomeStatus(verdict),
          trigger: run.trigger,
          stepsPassed: verdict.steps_passed,
          stepsFailed: failedSteps,
          stepsSkipped: verdict.skipped_count,
          startedAt: run.started_at ?? run.created_at,
          finishedAt,
        })
      } catch (failure) {
        options.log({ compliance_outcome: run.id, storyboard: verdict.storyboard_id, error: String(failure) })
      }
    }
  }

  interface Performed {
    verdicts: ReturnType<typeof verdictOf>[]
    diagnostics: ReturnType<typeof diagnosticsOf>
    answer: Record<string, unknown>
    error?: string
  }

  async function perform(run: StoredRun, signal: AbortSignal): Promise<Performed> {
    const full = bundle()
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
        ran = await runAgainst(run.agent_url, [entry.key], reduced, signal, run.org_id ?? undefined)
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
        runAgainst(run.agent_url, [entry.key], full, signal, run.org_id ?? undefined),
        runAgainst(reference.url, [entry.key], full, signal),
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
      ran = await runAgainst(run.agent_url, run.storyboard_ids, full, signal, run.org_id ?? undefined)
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

  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true
      return
    }
    pumping = true
    try {
      do {
        again = false
        while (!closing && executing.size < concurrency) {
          const run = await store.claimNext(iso(), iso(options.now() + leaseMs))
          if (!run) break
          const controller = new AbortController()
          const done = execute(run, controller).finally(() => {
            executing.delete(run.id)
            if (!closing) void pump()
          })
          executing.set(run.id, { controller, done })
        }
      } while (again && !closing)
    } catch (error) {
      options.log({ compliance_queue: 'failed', error: String(error) })
    } finally {
      pumping = false
    }
  }

  const sweep = async () => {
    if (closing) return
    try {
      const alive = [...executing.keys()]
      // This instance's own runs are alive whatever their lease says (a busy event loop may have delayed renewal).
      await Promise.all(alive.map((id) => store.renewLease(id, iso(options.now() + leaseMs))))
      const { requeued, failed } = await store.recover(iso(), maxAttempts, alive)
      if (requeued.length > 0 || failed.length > 0)
        options.log({ compliance_recovered: requeued, compliance_interrupted: failed })
      for (const id of failed) notify(id)
    } catch (error) {
      options.log({ compliance_recover: 'failed', error: String(error) })
    }
    await pump()
  }

  const runs: ComplianceRuns = {
    store,
    async submit(request) {
      const run: StoredRun = {
        id: crypto.randomUUID(),
        agent_url: request.agentUrl,
        org_id: request.orgId ?? null,
        trigger: request.trigger,
        storyboard_ids: [...request.storyboardIds],
        options: { requestedComplianceTarget: '3.1', ...request.options },
        state: 'queued',
        attempts: 0,
        lease_until: null,
        overall_status: 'queued',
        headline: null,
        tracks_passed: 0,
        tracks_failed: 0,
        tracks_skipped: 0,
        tracks_partial: 0,
        tracks: null,
        result: undefined,
        error: null,
        adcp_version: bundle().version,
        requested_compliance_target: request.options?.requestedComplianceTarget ?? '3.1',
        total_duration_ms: null,
        created_at: iso(),
        started_at: null,
        finished_at: null,
      }
      await store.create(run)
      void pump()
      return run
    },
    async launch(agentUrl, launch) {
      const run = await runs.submit({
        agentUrl,
        trigger: launch.trigger,
        storyboardIds: launch.storyboardIds ?? [],
      })
      return { runIds: [run.id] }
    },
    async wait(id, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const run = await store.get(id)
        if (!run || FINISHED.has(run.state) || Date.now() >= deadline) return run
        await Promise.race([
          new Promise<void>((resolve) => {
            let set = waiters.get(id)
            if (!set) waiters.set(id, (set = new Set()))
            set.add(resolve)
          }),
          // Another instance may be executing it: look again now and then.
          sleep(Math.min(500, Math.max(1, deadline - Date.now()))),
        ])
      }
    },
    async start() {
      await sweep()
      sweepTimer = setInterval(() => void sweep(), Math.max(100, Math.floor(leaseMs / 2)))
      sweepTimer.unref?.()
    },
    async close() {
      closing = true
      clearInterval(sweepTimer)
      const inFlight = [...executing]
      for (const [, execution] of inFlight) execution.controller.abort()
      await Promise.all(inFlight.map(([, execution]) => execution.done.catch(() => {})))
      for (const [id] of inFlight) await store.release(id).catch(() => {})
      for (const id of waiters.keys()) notify(id)
    },
    async idle() {
      for (;;) {
        await pump()
        if (executing.size === 0) return
        await Promise.all([...executing.values()].map((execution) => execution.done))
      }
    },
  }
  return runs
}

/**
 * The status side's view of the runs: `launch` stores the runs and answers their ids at once (monitoring
 * heartbeats, `refresh`).
 *
 * @example
 * const launcher = complianceRunLauncher(registry.complianceRuns)
 * const { runIds } = await launcher.launch('https://creative.example/mcp', { trigger: 'heartbeat' })
 */
export function complianceRunLauncher(runs: ComplianceRuns): ComplianceRunLauncher {
  return { launch: (agentUrl, options) => runs.launch(agentUrl, options) }
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
