/**
 * The status side's tables (migration 9), over the repository's driver so that the same SQL runs on SQLite
 * and PostgreSQL: per-agent settings and monitoring schedule (`registry_agent_compliance`), the storyboard
 * outcomes the runs side reports (`registry_compliance_outcomes`), the runs this side launched
 * (`registry_compliance_launches`: which ones were full-suite) and the outbound request log
 * (`registry_agent_requests`: heartbeats, refresh probes, token-endpoint tests).
 */
import { randomUUID } from 'node:crypto'
import { canonicalAgentUrl } from '../domain/names.js'
import type { SqlDriver, SqlExecutor } from '@adwire/sql'
import type { StoryboardOutcome } from './contract.js'

export const LIFECYCLE_STAGES = ['development', 'testing', 'production', 'deprecated'] as const
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number]

/** The stage of an agent nobody has set one for. */
export const DEFAULT_LIFECYCLE_STAGE: LifecycleStage = 'production'
/** The heartbeat interval of an agent nobody has set one for, hours (the document allows 6–168). */
export const DEFAULT_INTERVAL_HOURS = 24

export interface AgentSettings {
  readonly agentUrl: string
  readonly lifecycleStage: LifecycleStage
  readonly optOut: boolean
  /** Set at opt-out (and moved to the opt-in time): badges need a passing full-suite run started after it. */
  readonly requalifySince: string | null
  readonly paused: boolean
  readonly pausedAt: string | null
  readonly intervalHours: number
  readonly lastCheckedAt: string | null
  /** When the next heartbeat is due (`null`: now). */
  readonly nextCheckAt: string | null
  readonly lastStatus: string | null
  readonly statusChangedAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  /** Whether a row is stored (else these are the defaults). */
  readonly stored: boolean
}

export interface OutcomeRow {
  run_id: string
  storyboard_id: string
  agent_url: string
  adcp_version: string
  status: StoryboardOutcome['status']
  run_trigger: StoryboardOutcome['trigger']
  steps_passed: number
  steps_failed: number
  steps_skipped: number
  started_at: string
  finished_at: string
}

export interface OutboundRequestRow {
  id: string
  agent_url: string
  request_type: string
  user_agent: string
  response_time_ms: number | null
  success: boolean
  error_message: string | null
  created_at: string
}

interface SettingsRow {
  agent_url: string
  lifecycle_stage: string
  compliance_opt_out: number
  requalify_since: string | null
  monitoring_paused: number
  monitoring_paused_at: string | null
  check_interval_hours: number
  last_checked_at: string | null
  next_check_at: string | null
  last_status: string | null
  status_changed_at: string | null
  created_at: string
  updated_at: string
}

export const iso = (ms: number): string => new Date(ms).toISOString()

const toSettings = (row: SettingsRow): AgentSettings => ({
  agentUrl: row.agent_url,
  lifecycleStage: row.lifecycle_stage as LifecycleStage,
  optOut: Number(row.compliance_opt_out) === 1,
  requalifySince: row.requalify_since,
  paused: Number(row.monitoring_paused) === 1,
  pausedAt: row.monitoring_paused_at,
  intervalHours: Number(row.check_interval_hours),
  lastCheckedAt: row.last_checked_at,
  nextCheckAt: row.next_check_at,
  lastStatus: row.last_status,
  statusChangedAt: row.status_changed_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  stored: true,
})

const defaults = (agentUrl: string, now: string): AgentSettings => ({
  agentUrl,
  lifecycleStage: DEFAULT_LIFECYCLE_STAGE,
  optOut: false,
  requalifySince: null,
  paused: false,
  pausedAt: null,
  intervalHours: DEFAULT_INTERVAL_HOURS,
  lastCheckedAt: null,
  nextCheckAt: null,
  lastStatus: null,
  statusChangedAt: null,
  createdAt: now,
  updatedAt: now,
  stored: false,
})

export type SettingsPatch = Partial<
  Pick<
    AgentSettings,
    | 'lifecycleStage'
    | 'optOut'
    | 'requalifySince'
    | 'paused'
    | 'pausedAt'
    | 'intervalHours'
    | 'lastCheckedAt'
    | 'nextCheckAt'
    | 'lastStatus'
    | 'statusChangedAt'
  >
>

export interface ComplianceStatusStore {
  /** The stored settings, or the defaults (`stored: false`). */
  settings(agentUrl: string, now: number): Promise<AgentSettings>
  /** Applies `change` to the current settings (defaults when none) in one transaction; resolves to the result. */
  updateSettings(
    agentUrl: string,
    now: number,
    change: (current: AgentSettings) => SettingsPatch,
  ): Promise<AgentSettings>
  /** Stores an outcome (idempotent on run and storyboard). */
  recordOutcome(outcome: StoryboardOutcome): Promise<void>
  /** Every outcome of an agent, oldest first. */
  outcomes(agentUrl: string): Promise<OutcomeRow[]>
  recordLaunch(
    runId: string,
    agentUrl: string,
    trigger: string,
    fullSuite: boolean,
    now: number,
  ): Promise<void>
  /** The ids of the full-suite runs this side launched for an agent. */
  fullSuiteRuns(agentUrl: string): Promise<Set<string>>
  addRequest(entry: Omit<OutboundRequestRow, 'id'>): Promise<OutboundRequestRow>
  /** The newest `limit` requests (newest first) from `since`, and how many there are from `since`. */
  requests(
    agentUrl: string,
    options: { since?: string; limit: number },
  ): Promise<{ rows: OutboundRequestRow[]; total: number }>
  /** Gives every registered member agent a settings row (due now); resolves to how many were added. */
  enrolMemberAgents(now: number): Promise<number>
  /** Agents due for a heartbeat at `now` (registered, not paused, not opted out), soonest first. */
  dueAgents(
    now: number,
    limit: number,
  ): Promise<Array<{ agentUrl: string; nextCheckAt: string | null; intervalHours: number }>>
  /**
   * Moves an agent's schedule from `expected` to (`checkedAt`, `next`) only when it is still `expected` (another
   * instance may have claimed it); resolves to whether this caller claimed it.
   */
  claimHeartbeat(agentUrl: string, expected: string | null, checkedAt: string, next: string): Promise<boolean>
  /** The soonest due time among monitored agents (`null`: one is due now; `undefined`: none monitored). */
  nextDue(): Promise<string | null | undefined>
}

const SETTINGS_COLUMNS = `agent_url, lifecycle_stage, compliance_opt_out, requalify_since, monitoring_paused,
  monitoring_paused_at, check_interval_hours, last_checked_at, next_check_at, last_status, status_changed_at,
  created_at, updated_at`

const SETTINGS_COLUMN_OF: Record<keyof SettingsPatch, string> = {
  lifecycleStage: 'lifecycle_stage',
  optOut: 'compliance_opt_out',
  requalifySince: 'requalify_since',
  paused: 'monitoring_paused',
  pausedAt: 'monitoring_paused_at',
  intervalHours: 'check_interval_hours',
  lastCheckedAt: 'last_checked_at',
  nextCheckAt: 'next_check_at',
  lastStatus: 'last_status',
  statusChangedAt: 'status_changed_at',
}

const MONITORED = `c.monitoring_paused = 0 AND c.compliance_opt_out = 0
  AND EXISTS (SELECT 1 FROM registry_member_agents m WHERE m.url_canonical = c.agent_url_canonical)`

async function readSettings(db: SqlExecutor, agentUrl: string): Promise<SettingsRow | undefined> {
  return db.one<SettingsRow>(
    `SELECT ${SETTINGS_COLUMNS} FROM registry_agent_compliance WHERE agent_url_canonical = ?`,
    [canonicalAgentUrl(agentUrl)],
  )
}

/** The store on `db` (the repository's driver). */
export function complianceStatusStore(db: SqlDriver): ComplianceStatusStore {
  return {
    async settings(agentUrl, now) {
      const row = await readSettings(db, agentUrl)
      return row ? toSettings(row) : defaults(agentUrl, iso(now))
    },

    updateSettings(agentUrl, now, change) {
      return db.transaction(async (tx) => {
        const canonical = canonicalAgentUrl(agentUrl)
        const at = iso(now)
        // The row first (defaults), then locked, then only the changed columns written: a heartbeat claim or an
        // outcome's status update racing this change cannot be lost, nor lose it.
        await tx.run(
          `INSERT INTO registry_agent_compliance (agent_url_canonical, agent_url, lifecycle_stage, compliance_opt_out,
             monitoring_paused, check_interval_hours, created_at, updated_at) VALUES (?, ?, ?, 0, 0, ?, ?, ?)
           ON CONFLICT (agent_url_canonical) DO NOTHING`,
          [canonical, agentUrl, DEFAULT_LIFECYCLE_STAGE, DEFAULT_INTERVAL_HOURS, at, at],
        )
        const row = await tx.one<SettingsRow>(
          `SELECT ${SETTINGS_COLUMNS} FROM registry_agent_compliance WHERE agent_url_canonical = ?${
            tx.dialect === 'postgres' ? ' FOR UPDATE' : ''
          }`,
          [canonical],
        )
        const current = toSettings(row!)
        const patch = change(current)
        const sets: string[] = ['updated_at = ?']
        const values: Array<string | number | null> = [at]
        for (const [key, value] of Object.entries(patch) as Array<[keyof SettingsPatch, unknown]>) {
          if (value === undefined) continue
          sets.push(`${SETTINGS_COLUMN_OF[key]} = ?`)
          values.push(typeof value === 'boolean' ? (value ? 1 : 0) : (value as string | number | null))
        }
        await tx.run(
          `UPDATE registry_agent_compliance SET ${sets.join(', ')} WHERE agent_url_canonical = ?`,
          [...values, canonical],
        )
        return { ...current, ...patch, updatedAt: at, stored: true }
      })
    },

    async recordOutcome(outcome) {
      await db.run(
        `INSERT INTO registry_compliance_outcomes (run_id, storyboard_id, agent_url_canonical, agent_url,
           adcp_version, status, run_trigger, steps_passed, steps_failed, steps_skipped, started_at, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, storyboard_id) DO UPDATE SET status = excluded.status,
           adcp_version = excluded.adcp_version, steps_passed = excluded.steps_passed,
           steps_failed = excluded.steps_failed, steps_skipped = excluded.steps_skipped,
           started_at = excluded.started_at, finished_at = excluded.finished_at`,
        [
          outcome.runId,
          outcome.storyboardId,
          canonicalAgentUrl(outcome.agentUrl),
          outcome.agentUrl,
          outcome.adcpVersion,
          outcome.status,
          outcome.trigger,
          outcome.stepsPassed,
          outcome.stepsFailed,
          outcome.stepsSkipped,
          outcome.startedAt,
          outcome.finishedAt,
        ],
      )
    },

    async outcomes(agentUrl) {
      const rows = await db.all<OutcomeRow>(
        `SELECT run_id, storyboard_id, agent_url, adcp_version, status, run_trigger, steps_passed, steps_failed,
           steps_skipped, started_at, finished_at
         FROM registry_compliance_outcomes WHERE agent_url_canonical = ? ORDER BY finished_at, run_id, storyboard_id`,
        [canonicalAgentUrl(agentUrl)],
      )
      return rows.map((row) => ({
        ...row,
        steps_passed: Number(row.steps_passed),
        steps_failed: Number(row.steps_failed),
        steps_skipped: Number(row.steps_skipped),
      }))
    },

    async recordLaunch(runId, agentUrl, trigger, fullSuite, now) {
      await db.run(
        `INSERT INTO registry_compliance_launches (run_id, agent_url_canonical, run_trigger, full_suite, created_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
        [runId, canonicalAgentUrl(agentUrl), trigger, fullSuite ? 1 : 0, iso(now)],
      )
    },

    async fullSuiteRuns(agentUrl) {
      const rows = await db.all<{ run_id: string }>(
        `SELECT run_id FROM registry_compliance_launches WHERE agent_url_canonical = ? AND full_suite = 1`,
        [canonicalAgentUrl(agentUrl)],
      )
      return new Set(rows.map((row) => row.run_id))
    },

    async addRequest(entry) {
      const row = { id: randomUUID(), ...entry }
      await db.run(
        `INSERT INTO registry_agent_requests (id, agent_url_canonical, agent_url, request_type, user_agent,
           response_time_ms, success, error_message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          row.id,
          canonicalAgentUrl(row.agent_url),
          row.agent_url,
          row.request_type,
          row.user_agent,
          row.response_time_ms === null ? null : Math.round(row.response_time_ms),
          row.success ? 1 : 0,
          row.error_message,
          row.created_at,
        ],
      )
      return row
    },

    async requests(agentUrl, { since, limit }) {
      const where = `agent_url_canonical = ?${since ? ' AND created_at >= ?' : ''}`
      const params = since ? [canonicalAgentUrl(agentUrl), since] : [canonicalAgentUrl(agentUrl)]
      const rows = await db.all<Omit<OutboundRequestRow, 'success'> & { success: number }>(
        `SELECT id, agent_url, request_type, user_agent, response_time_ms, success, error_message, created_at
         FROM registry_agent_requests WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
        [...params, limit],
      )
      const count = await db.one<{ total: number | string }>(
        `SELECT COUNT(*) AS total FROM registry_agent_requests WHERE ${where}`,
        params,
      )
      return {
        rows: rows.map((row) => ({
          ...row,
          response_time_ms: row.response_time_ms === null ? null : Number(row.response_time_ms),
          success: Number(row.success) === 1,
        })),
        total: Number(count?.total ?? 0),
      }
    },

    async enrolMemberAgents(now) {
      const at = iso(now)
      return db.run(
        `INSERT INTO registry_agent_compliance (agent_url_canonical, agent_url, lifecycle_stage, compliance_opt_out,
           monitoring_paused, check_interval_hours, created_at, updated_at)
         SELECT m.url_canonical, MIN(m.url), ?, 0, 0, ?, ?, ?
         FROM registry_member_agents m
         WHERE NOT EXISTS (SELECT 1 FROM registry_agent_compliance c WHERE c.agent_url_canonical = m.url_canonical)
         GROUP BY m.url_canonical
         ON CONFLICT (agent_url_canonical) DO NOTHING`,
        [DEFAULT_LIFECYCLE_STAGE, DEFAULT_INTERVAL_HOURS, at, at],
      )
    },

    async dueAgents(now, limit) {
      const rows = await db.all<{
        agent_url: string
        next_check_at: string | null
        check_interval_hours: number
      }>(
        `SELECT c.agent_url, c.next_check_at, c.check_interval_hours FROM registry_agent_compliance c
         WHERE ${MONITORED} AND (c.next_check_at IS NULL OR c.next_check_at <= ?)
         ORDER BY c.next_check_at IS NOT NULL, c.next_check_at, c.agent_url LIMIT ?`,
        [iso(now), limit],
      )
      return rows.map((row) => ({
        agentUrl: row.agent_url,
        nextCheckAt: row.next_check_at,
        intervalHours: Number(row.check_interval_hours),
      }))
    },

    async claimHeartbeat(agentUrl, expected, checkedAt, next) {
      const changed = await db.run(
        `UPDATE registry_agent_compliance SET last_checked_at = ?, next_check_at = ?
         WHERE agent_url_canonical = ? AND ${expected === null ? 'next_check_at IS NULL' : 'next_check_at = ?'}`,
        expected === null
          ? [checkedAt, next, canonicalAgentUrl(agentUrl)]
          : [checkedAt, next, canonicalAgentUrl(agentUrl), expected],
      )
      return changed === 1
    },

    async nextDue() {
      const row = await db.one<{ due: number | string }>(
        `SELECT COUNT(*) AS due FROM registry_agent_compliance c WHERE ${MONITORED} AND c.next_check_at IS NULL`,
      )
      if (Number(row?.due ?? 0) > 0) return null
      const soonest = await db.one<{ soonest: string | null }>(
        `SELECT MIN(c.next_check_at) AS soonest FROM registry_agent_compliance c WHERE ${MONITORED}`,
      )
      return soonest?.soonest ?? undefined
    },
  }
}
