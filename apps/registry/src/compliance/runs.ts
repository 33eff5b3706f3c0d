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
import type { Bundle } from '@adwire/storyboards'
import type { AgentCredentialSource, ComplianceOutcomeSink, ComplianceRunLauncher } from './contract.js'
import { inProcessRunExecutor, WorkerCrashedError, type RunExecutor } from './run-executor.js'
import { storyboardBundle } from './runs-catalog.js'
import { outcomeStatus, summarize } from './runs-grade.js'
import type { Performed } from './runs-perform.js'
import {
  runStore,
  type RunOptions,
  type RunStore,
  type RunTrigger,
  type StoredRun,
  type StoredVerdict,
} from './runs-store.js'
import type { SqlDriver } from '@adwire/sql'
import { every, type Every } from '@adwire/service-kit'

export interface ComplianceRunsOptions {
  readonly driver: SqlDriver
  /** The SSRF-safe fetch every agent exchange goes through (the in-process executor's). */
  readonly fetch: typeof fetch
  /**
   * Where runs are performed. Default: on this event loop with `fetch` (tests); the service passes the
   * worker-thread executor (`workerRunExecutor`), which keeps runs off the request event loop.
   */
  readonly executor?: RunExecutor
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
  const executor =
    options.executor ??
    inProcessRunExecutor({
      fetch: options.fetch,
      bundle,
      now: options.now,
      stepTimeoutMs: options.stepTimeoutMs ?? 30_000,
      runTimeoutMs: options.runTimeoutMs ?? 600_000,
    })
  const executing = new Map<string, { controller: AbortController; done: Promise<void>; attempts: number }>()
  const waiters = new Map<string, Set<() => void>>()
  let closing = false
  let pumping = false
  let again = false
  let sweepTimer: Every | undefined

  const notify = (id: string) => {
    for (const wake of waiters.get(id) ?? []) wake()
    waiters.delete(id)
  }

  async function execute(run: StoredRun, controller: AbortController): Promise<void> {
    const started = options.now()
    // The lease is ours while `attempts` is the one we claimed: a reclaim by another instance counts one more.
    const renew = every(
      () => store.renewLease(run.id, run.attempts, iso(options.now() + leaseMs)),
      Math.max(50, Math.floor(leaseMs / 3)),
    )
    try {
      const outcome = await perform(run, controller.signal)
      if (controller.signal.aborted) return // released by close(): the next start runs it again
      if (!outcome) return // the worker died: the lease brings the run back
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
        run.attempts,
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
          run.attempts,
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
      void renew.stop()
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

  /**
   * Performs the run through the executor, with the credentials of the agents it talks to looked up here (the
   * sealed store stays on this side). Resolves to undefined when the worker performing it died: the run stays
   * `running` under its lease, no longer renewed, and the sweep requeues it once the lease has expired.
   */
  async function perform(run: StoredRun, signal: AbortSignal): Promise<Performed | undefined> {
    const urls = [
      run.agent_url,
      ...(run.trigger === 'compare' && run.options.reference ? [run.options.reference.url] : []),
    ]
    const credentials: Record<string, Awaited<ReturnType<AgentCredentialSource['credentialFor']>>> = {}
    // The run's organization presents its own credential to its agent; the reference agent of a comparison, and
    // the registry's own runs (no organization), present the controller's.
    for (const url of urls) {
      credentials[url] = await options.credentials?.credentialFor(
        url,
        url === run.agent_url ? (run.org_id ?? undefined) : undefined,
      )
    }
    try {
      return await executor.perform(run, credentials, signal)
    } catch (error) {
      if (!(error instanceof WorkerCrashedError)) throw error
      options.log({
        compliance_run: run.id,
        worker: 'died',
        lease_until: 'left to expire',
        error: error.message,
      })
      return undefined
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
          executing.set(run.id, { controller, done, attempts: run.attempts })
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
      await Promise.all(
        [...executing].map(([id, execution]) =>
          store.renewLease(id, execution.attempts, iso(options.now() + leaseMs)),
        ),
      )
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
      sweepTimer = every(sweep, Math.max(100, Math.floor(leaseMs / 2)))
    },
    async close() {
      closing = true
      await sweepTimer?.stop()
      const inFlight = [...executing]
      for (const [, execution] of inFlight) execution.controller.abort()
      await Promise.all(inFlight.map(([, execution]) => execution.done.catch(() => {})))
      for (const [id, execution] of inFlight) await store.release(id, execution.attempts).catch(() => {})
      await executor.close()
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
