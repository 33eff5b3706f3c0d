/**
 * Where compliance runs live (migration 8, SQLite and PostgreSQL alike): the run jobs with their state and lease,
 * one verdict per storyboard per run, and the per-step diagnostics (the request and response the runner
 * captured).
 */
import { leaseQueue, type LeaseQueueSpec, type SqlDriver, type SqlValue } from '@adwire/sql'
import { jsonText, parseJson } from '../db/json.js'
import { canonicalAgentUrl } from '../domain/names.js'
import type { StoryboardOutcome } from './contract.js'

export type RunState = 'queued' | 'running' | 'completed' | 'failed'
export type RunTrigger = StoryboardOutcome['trigger']

/** What a run is asked to do. */
export interface RunOptions {
  /** runStoryboardStep: the step, the caller's context, whether the verdict is reported. */
  readonly stepId?: string
  readonly context?: Record<string, unknown>
  readonly dryRun?: boolean
  /** compareStoryboard: the reference agent. */
  readonly reference?: { readonly url: string; readonly name: string }
  readonly requestedComplianceTarget: string
}

export interface StoredRun {
  readonly id: string
  readonly agent_url: string
  readonly org_id: string | null
  readonly trigger: RunTrigger
  readonly storyboard_ids: readonly string[]
  readonly options: RunOptions
  readonly state: RunState
  readonly attempts: number
  readonly lease_until: string | null
  readonly overall_status: string
  readonly headline: string | null
  readonly tracks_passed: number
  readonly tracks_failed: number
  readonly tracks_skipped: number
  readonly tracks_partial: number
  readonly tracks: unknown
  /** The operation's answer (runStoryboard, runStoryboardStep, compareStoryboard), once finished. */
  readonly result: Record<string, unknown> | undefined
  readonly error: string | null
  readonly adcp_version: string | null
  readonly requested_compliance_target: string | null
  readonly total_duration_ms: number | null
  readonly created_at: string
  readonly started_at: string | null
  readonly finished_at: string | null
}

/** The document's `StoryboardStatus` plus what a run response adds. */
export interface StoryboardVerdict {
  readonly storyboard_id: string
  readonly title: string
  readonly category: string | null
  readonly track: string | null
  readonly status: 'passing' | 'failing' | 'partial' | 'untested'
  readonly steps_passed: number
  readonly steps_total: number
  readonly failure_count: number
  readonly skipped_count: number
  readonly first_failed_step_id: string | null
  readonly first_failed_step_title: string | null
  readonly first_failed_step_task: string | null
  readonly first_failure_message: string | null
  readonly first_failure_validations: unknown[]
}

export interface StoredVerdict extends StoryboardVerdict {
  readonly run_id: string
  readonly agent_url: string
  readonly adcp_version: string | null
  readonly requested_compliance_target: string | null
  readonly tested_at: string
}

/** One step as the runner saw it (the document's `ComplianceStepDiagnostic`). */
export interface StepDiagnostic {
  readonly id: string
  readonly run_id: string
  readonly agent_url: string
  readonly storyboard_id: string
  readonly phase_id: string
  readonly step_id: string
  readonly task: string
  readonly step_passed: boolean
  readonly duration_ms: number | null
  readonly request_url: string | null
  readonly request_jsonb?: unknown
  readonly response_status: number | null
  readonly response_jsonb?: unknown
  readonly error_text: string | null
  readonly adcp_error_jsonb?: unknown
  readonly failed_validations_jsonb?: unknown
  readonly served_by_agent_url: string | null
  readonly captured_at: string
}

export interface RunStore {
  create(run: StoredRun): Promise<void>
  get(id: string): Promise<StoredRun | undefined>
  /**
   * Claims the oldest queued run (queued → running, one more attempt, leased until `leaseUntil`). Concurrent
   * claimers never get the same run (the lease queue of @adwire/sql: `FOR UPDATE SKIP LOCKED` on PostgreSQL,
   * one UPDATE … RETURNING on SQLite). The claimed run's `attempts` is the lease's fencing token.
   */
  claimNext(nowIso: string, leaseUntil: string): Promise<StoredRun | undefined>
  /**
   * Extends the lease of the claim that counted `attempts`; resolves to false when the run is no longer that
   * claim's (recovered after its lease expired, and maybe claimed again).
   */
  renewLease(id: string, attempts: number, leaseUntil: string): Promise<boolean>
  /** A graceful stop: the claim's run goes back to the queue, the attempt not counted. */
  release(id: string, attempts: number): Promise<void>
  /**
   * Runs left `running` by an instance that stopped renewing their lease: back to `queued` while they have
   * attempts left, else `failed`. Resolves to the ids requeued and failed.
   */
  recover(
    nowIso: string,
    maxAttempts: number,
    alive: readonly string[],
  ): Promise<{ requeued: string[]; failed: string[] }>
  /**
   * Stores the verdicts and diagnostics and finishes the run, in one transaction; resolves to false (storing
   * nothing) when the run is no longer the claim's that counted `attempts` (its lease expired and another
   * instance or worker recovered it).
   */
  finish(
    id: string,
    attempts: number,
    changes: Pick<
      StoredRun,
      | 'state'
      | 'overall_status'
      | 'headline'
      | 'tracks_passed'
      | 'tracks_failed'
      | 'tracks_skipped'
      | 'tracks_partial'
      | 'tracks'
      | 'result'
      | 'error'
      | 'adcp_version'
      | 'total_duration_ms'
      | 'finished_at'
    >,
    verdicts: readonly StoredVerdict[],
    diagnostics: readonly StepDiagnostic[],
  ): Promise<boolean>
  /** The agent's runs, newest first. */
  history(agentUrl: string, limit: number): Promise<StoredRun[]>
  latestRun(agentUrl: string): Promise<StoredRun | undefined>
  diagnostics(runId: string, limit: number): Promise<StepDiagnostic[]>
  /** The newest verdict of each storyboard tested on the agent, with when it last passed. */
  latestVerdicts(agentUrl: string): Promise<Array<StoredVerdict & { last_passed_at: string | null }>>
}

interface RunRow {
  id: string
  agent_url: string
  org_id: string | null
  trigger_kind: RunTrigger
  storyboard_ids: string
  options: string
  state: RunState
  attempts: number
  lease_until: string | null
  overall_status: string
  headline: string | null
  tracks_passed: number
  tracks_failed: number
  tracks_skipped: number
  tracks_partial: number
  tracks: string | null
  result: string | null
  error: string | null
  adcp_version: string | null
  requested_compliance_target: string | null
  total_duration_ms: number | null
  created_at: string
  started_at: string | null
  finished_at: string | null
}

const toRun = (row: RunRow): StoredRun => ({
  id: row.id,
  agent_url: row.agent_url,
  org_id: row.org_id,
  trigger: row.trigger_kind,
  storyboard_ids: parseJson<string[]>(row.storyboard_ids) ?? [],
  options: parseJson<RunOptions>(row.options) ?? { requestedComplianceTarget: '3.1' },
  state: row.state,
  attempts: Number(row.attempts),
  lease_until: row.lease_until,
  overall_status: row.overall_status,
  headline: row.headline,
  tracks_passed: Number(row.tracks_passed),
  tracks_failed: Number(row.tracks_failed),
  tracks_skipped: Number(row.tracks_skipped),
  tracks_partial: Number(row.tracks_partial),
  tracks: parseJson(row.tracks),
  result: parseJson(row.result),
  error: row.error,
  adcp_version: row.adcp_version,
  requested_compliance_target: row.requested_compliance_target,
  total_duration_ms: row.total_duration_ms === null ? null : Number(row.total_duration_ms),
  created_at: row.created_at,
  started_at: row.started_at,
  finished_at: row.finished_at,
})

interface VerdictRow {
  run_id: string
  storyboard_id: string
  agent_url: string
  title: string
  category: string | null
  track: string | null
  status: StoryboardVerdict['status']
  steps_passed: number
  steps_total: number
  failure_count: number
  skipped_count: number
  first_failed_step_id: string | null
  first_failed_step_title: string | null
  first_failed_step_task: string | null
  first_failure_message: string | null
  first_failure_validations: string | null
  adcp_version: string | null
  requested_compliance_target: string | null
  tested_at: string
}

const toVerdict = (row: VerdictRow): StoredVerdict => ({
  run_id: row.run_id,
  storyboard_id: row.storyboard_id,
  agent_url: row.agent_url,
  title: row.title,
  category: row.category,
  track: row.track,
  status: row.status,
  steps_passed: Number(row.steps_passed),
  steps_total: Number(row.steps_total),
  failure_count: Number(row.failure_count),
  skipped_count: Number(row.skipped_count),
  first_failed_step_id: row.first_failed_step_id,
  first_failed_step_title: row.first_failed_step_title,
  first_failed_step_task: row.first_failed_step_task,
  first_failure_message: row.first_failure_message,
  first_failure_validations: parseJson<unknown[]>(row.first_failure_validations) ?? [],
  adcp_version: row.adcp_version,
  requested_compliance_target: row.requested_compliance_target,
  tested_at: row.tested_at,
})

interface DiagnosticRow {
  id: string
  run_id: string
  agent_url: string
  storyboard_id: string
  phase_id: string
  step_id: string
  task: string
  step_passed: number
  duration_ms: number | null
  request_url: string | null
  request: string | null
  response_status: number | null
  response: string | null
  error_text: string | null
  adcp_error: string | null
  failed_validations: string | null
  served_by_agent_url: string | null
  captured_at: string
}

const toDiagnostic = (row: DiagnosticRow): StepDiagnostic => {
  const optional = (name: string, text: string | null) =>
    text === null ? {} : { [name]: parseJson<unknown>(text) }
  return {
    id: row.id,
    run_id: row.run_id,
    agent_url: row.agent_url,
    storyboard_id: row.storyboard_id,
    phase_id: row.phase_id,
    step_id: row.step_id,
    task: row.task,
    step_passed: Number(row.step_passed) === 1,
    duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
    request_url: row.request_url,
    ...optional('request_jsonb', row.request),
    response_status: row.response_status === null ? null : Number(row.response_status),
    ...optional('response_jsonb', row.response),
    error_text: row.error_text,
    ...optional('adcp_error_jsonb', row.adcp_error),
    ...optional('failed_validations_jsonb', row.failed_validations),
    served_by_agent_url: row.served_by_agent_url,
    captured_at: row.captured_at,
  }
}

/** The runs table as a lease queue: `attempts` is the fence, a claimed run is `running`. */
const RUN_QUEUE: LeaseQueueSpec = {
  table: 'registry_compliance_runs',
  key: 'id',
  state: 'state',
  attempts: 'attempts',
  leaseUntil: 'lease_until',
  states: { ready: 'queued', leased: 'running', done: 'completed' },
  order: 'created_at, id',
}

/** The run statements on `db`. */
export function runStore(db: SqlDriver): RunStore {
  const queue = leaseQueue(db, RUN_QUEUE)
  const get = async (id: string) => {
    const row = await db.one<RunRow>('SELECT * FROM registry_compliance_runs WHERE id = ?', [id])
    return row && toRun(row)
  }
  return {
    async create(run) {
      const values: SqlValue[] = [
        run.id,
        run.agent_url,
        canonicalAgentUrl(run.agent_url),
        run.org_id,
        run.trigger,
        JSON.stringify(run.storyboard_ids),
        JSON.stringify(run.options),
        run.state,
        run.attempts,
        run.lease_until,
        run.overall_status,
        run.headline,
        run.tracks_passed,
        run.tracks_failed,
        run.tracks_skipped,
        run.tracks_partial,
        jsonText(run.tracks),
        jsonText(run.result),
        run.error,
        run.adcp_version,
        run.requested_compliance_target,
        run.total_duration_ms,
        run.created_at,
        run.started_at,
        run.finished_at,
      ]
      await db.run(
        `INSERT INTO registry_compliance_runs (id, agent_url, agent_url_canonical, org_id, trigger_kind,
           storyboard_ids, options, state, attempts, lease_until, overall_status, headline, tracks_passed,
           tracks_failed, tracks_skipped, tracks_partial, tracks, result, error, adcp_version,
           requested_compliance_target, total_duration_ms, created_at, started_at, finished_at)
         VALUES (${values.map(() => '?').join(', ')})`,
        values,
      )
    },
    get,
    async claimNext(nowIso, leaseUntil) {
      const [claimed] = await queue.claim<RunRow>({
        now: nowIso,
        leaseUntil,
        limit: 1,
        set: { overall_status: 'running', started_at: { sql: 'COALESCE(started_at, ?)', params: [nowIso] } },
      })
      return claimed && toRun(claimed.row)
    },
    renewLease: (id, attempts, leaseUntil) => queue.renew(id, attempts, leaseUntil),
    async release(id, attempts) {
      await queue.release(id, attempts, { set: { overall_status: 'queued' } })
    },
    async recover(nowIso, maxAttempts, alive) {
      const { requeued, failed } = await queue.recover({
        now: nowIso,
        maxAttempts,
        skip: alive,
        requeue: { overall_status: 'queued' },
        failed: {
          state: 'failed',
          set: {
            overall_status: 'error',
            error: 'interrupted',
            headline: `the registry stopped during this run ${maxAttempts} times; it was not retried again`,
            finished_at: nowIso,
          },
        },
      })
      return { requeued: requeued.map(String), failed: failed.map(String) }
    },
    async finish(id, attempts, changes, verdicts, diagnostics) {
      return db.transaction(async (tx) => {
        // The fenced update first: it takes the row (a later claimer's fence makes it change nothing).
        const owned = await queue.on(tx).done(id, attempts, {
          state: changes.state,
          set: {
            overall_status: changes.overall_status,
            headline: changes.headline,
            tracks_passed: changes.tracks_passed,
            tracks_failed: changes.tracks_failed,
            tracks_skipped: changes.tracks_skipped,
            tracks_partial: changes.tracks_partial,
            tracks: jsonText(changes.tracks),
            result: jsonText(changes.result),
            error: changes.error,
            adcp_version: changes.adcp_version,
            total_duration_ms: changes.total_duration_ms,
            finished_at: changes.finished_at,
          },
        })
        if (!owned) return false
        for (const verdict of verdicts) {
          const values: SqlValue[] = [
            verdict.run_id,
            verdict.storyboard_id,
            verdict.agent_url,
            canonicalAgentUrl(verdict.agent_url),
            verdict.title,
            verdict.category,
            verdict.track,
            verdict.status,
            verdict.steps_passed,
            verdict.steps_total,
            verdict.failure_count,
            verdict.skipped_count,
            verdict.first_failed_step_id,
            verdict.first_failed_step_title,
            verdict.first_failed_step_task,
            verdict.first_failure_message,
            JSON.stringify(verdict.first_failure_validations),
            verdict.adcp_version,
            verdict.requested_compliance_target,
            verdict.tested_at,
          ]
          await tx.run(
            `INSERT INTO registry_compliance_storyboard_results (run_id, storyboard_id, agent_url, agent_url_canonical,
               title, category, track, status, steps_passed, steps_total, failure_count, skipped_count,
               first_failed_step_id, first_failed_step_title, first_failed_step_task, first_failure_message,
               first_failure_validations, adcp_version, requested_compliance_target, tested_at)
             VALUES (${values.map(() => '?').join(', ')})`,
            values,
          )
        }
        for (const [position, diagnostic] of diagnostics.entries()) {
          const values: SqlValue[] = [
            diagnostic.id,
            diagnostic.run_id,
            position,
            diagnostic.agent_url,
            diagnostic.storyboard_id,
            diagnostic.phase_id,
            diagnostic.step_id,
            diagnostic.task,
            diagnostic.step_passed ? 1 : 0,
            diagnostic.duration_ms,
            diagnostic.request_url,
            jsonText(diagnostic.request_jsonb),
            diagnostic.response_status,
            jsonText(diagnostic.response_jsonb),
            diagnostic.error_text,
            jsonText(diagnostic.adcp_error_jsonb),
            jsonText(diagnostic.failed_validations_jsonb),
            diagnostic.served_by_agent_url,
            diagnostic.captured_at,
          ]
          await tx.run(
            `INSERT INTO registry_compliance_diagnostics (id, run_id, position, agent_url, storyboard_id, phase_id,
               step_id, task, step_passed, duration_ms, request_url, request, response_status, response,
               error_text, adcp_error, failed_validations, served_by_agent_url, captured_at)
             VALUES (${values.map(() => '?').join(', ')})`,
            values,
          )
        }
        return true
      })
    },
    async history(agentUrl, limit) {
      const rows = await db.all<RunRow>(
        `SELECT * FROM registry_compliance_runs WHERE agent_url_canonical = ?
         ORDER BY created_at DESC, id DESC LIMIT ?`,
        [canonicalAgentUrl(agentUrl), limit],
      )
      return rows.map(toRun)
    },
    async latestRun(agentUrl) {
      const row = await db.one<RunRow>(
        `SELECT * FROM registry_compliance_runs WHERE agent_url_canonical = ?
         ORDER BY created_at DESC, id DESC LIMIT 1`,
        [canonicalAgentUrl(agentUrl)],
      )
      return row && toRun(row)
    },
    async diagnostics(runId, limit) {
      const rows = await db.all<DiagnosticRow>(
        `SELECT id, run_id, agent_url, storyboard_id, phase_id, step_id, task, step_passed, duration_ms,
           request_url, request, response_status, response, error_text, adcp_error, failed_validations,
           served_by_agent_url, captured_at
         FROM registry_compliance_diagnostics WHERE run_id = ? ORDER BY position LIMIT ?`,
        [runId, limit],
      )
      return rows.map(toDiagnostic)
    },
    async latestVerdicts(agentUrl) {
      const canonical = canonicalAgentUrl(agentUrl)
      const rows = await db.all<VerdictRow & { last_passed_at: string | null }>(
        `SELECT r.*, (SELECT MAX(p.tested_at) FROM registry_compliance_storyboard_results p
             WHERE p.agent_url_canonical = r.agent_url_canonical AND p.storyboard_id = r.storyboard_id
               AND p.status = 'passing') AS last_passed_at
         FROM registry_compliance_storyboard_results r
         WHERE r.agent_url_canonical = ? AND r.tested_at = (
           SELECT MAX(q.tested_at) FROM registry_compliance_storyboard_results q
           WHERE q.agent_url_canonical = r.agent_url_canonical AND q.storyboard_id = r.storyboard_id)
         ORDER BY r.storyboard_id`,
        [canonical],
      )
      // Two runs finishing in the same millisecond: keep one row per storyboard.
      const seen = new Set<string>()
      return rows
        .filter((row) => !seen.has(row.storyboard_id) && seen.add(row.storyboard_id))
        .map((row) => ({ ...toVerdict(row), last_passed_at: row.last_passed_at }))
    },
  }
}
