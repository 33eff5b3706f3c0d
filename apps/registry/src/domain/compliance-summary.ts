/**
 * The compliance summary of one agent (registry.yaml `getAgentCompliance`, `AgentComplianceDetail`): per-track
 * and per-specialism states, the storyboard rows, the passing streak and the owner-only membership fields, all
 * derived from the agent's latest storyboard outcomes (`compliance/status.ts` `derive`). No HTTP here: the route
 * shapes the answer from this.
 */
import type { StoryboardCatalog } from '../compliance/status-catalog.js'
import type { AgentSettings } from '../compliance/status-store.js'
import { releaseOf, storyboardState, type Derived } from '../compliance/status.js'
import { hasApiAccess, type MembershipTier } from './membership.js'

/** The state of a track (or of a specialism when it has outcomes). */
export type TrackState = 'passing' | 'failing' | 'partial'
export type SpecialismState = 'passing' | 'failing' | 'untested' | 'unknown'

/** One track's tally over the agent's latest outcomes. */
export interface TrackDetail {
  readonly track: string
  readonly status: TrackState
  readonly scenario_count: number
  readonly passed_count: number
  readonly duration_ms: number
}

/** What {@link summarizeCompliance} derives. */
export interface ComplianceSummary {
  readonly tracks: Record<string, TrackState>
  readonly trackDetails: TrackDetail[]
  readonly specialismStatus: Record<string, SpecialismState>
  readonly storyboards: ReturnType<typeof storyboardRows>
  readonly passing: number
  readonly total: number
  readonly lastPassedAt: string | null
  readonly lastFailedAt: string | null
  /** Whole days the agent has been passing without a status change (0 unless passing). */
  readonly streakDays: number
  readonly headline: string | null
}

const DAY_MS = 86_400_000

const TIER_LABELS: Record<MembershipTier, string> = {
  explorer: 'Explorer',
  professional: 'Professional',
  builder: 'Builder',
  member: 'Member',
  leader: 'Leader',
}

/** The `verdict_source` of a run trigger. */
const TRIGGER_SOURCE: Record<string, 'heartbeat' | 'owner_test' | 'manual'> = {
  heartbeat: 'heartbeat',
  refresh: 'owner_test',
  manual: 'manual',
  step: 'manual',
  compare: 'manual',
}

const trackState = (detail: { total: number; passed: number }): TrackState =>
  detail.passed === detail.total ? 'passing' : detail.passed === 0 ? 'failing' : 'partial'

const newestOf = (values: Iterable<string>): string | null => {
  let newest: string | null = null
  for (const value of values) if (newest === null || value > newest) newest = value
  return newest
}

/** The `storyboard_statuses[]` rows: one per storyboard, its latest outcome. */
function storyboardRows(derived: Derived, catalog: StoryboardCatalog) {
  return derived.latest.map((row) => {
    const info = catalog.info(row.storyboard_id)
    return {
      storyboard_id: row.storyboard_id,
      requested_compliance_target: releaseOf(row.adcp_version),
      adcp_version: row.adcp_version,
      title: info.title,
      category: info.category,
      track: info.track,
      status: storyboardState(row.status),
      steps_passed: row.steps_passed,
      steps_total: row.steps_passed + row.steps_failed + row.steps_skipped,
      failure_count: row.steps_failed,
      skipped_count: row.steps_skipped,
      first_failed_step_id: null,
      first_failed_step_title: null,
      first_failed_step_task: null,
      first_failure_message: null,
      first_failure_validations: [],
      last_tested_at: row.finished_at,
      last_passed_at: derived.lastPassed.get(row.storyboard_id) ?? null,
    }
  })
}

/**
 * Summarizes an agent's latest outcomes: a track passes when all its storyboards passed, fails when none did,
 * else is partial; a specialism fails when any of its storyboards did; the streak counts whole days since the
 * status last changed while passing.
 *
 * @example
 * const { settings, derived } = await service.read(agentUrl)
 * const summary = summarizeCompliance(derived, settings, service.catalog, Date.now())
 * summary.headline // '3 of 4 storyboards passing'
 */
export function summarizeCompliance(
  derived: Derived,
  settings: AgentSettings,
  catalog: StoryboardCatalog,
  now: number,
): ComplianceSummary {
  const tallies = new Map<string, { total: number; passed: number; ms: number }>()
  const specialismStatus: Record<string, SpecialismState> = {}
  for (const row of derived.latest) {
    const info = catalog.info(row.storyboard_id)
    if (info.track) {
      const tally = tallies.get(info.track) ?? { total: 0, passed: 0, ms: 0 }
      tally.total += 1
      if (row.status === 'passed') tally.passed += 1
      tally.ms += Math.max(0, Date.parse(row.finished_at) - Date.parse(row.started_at))
      tallies.set(info.track, tally)
    }
    if (info.specialism && specialismStatus[info.specialism] !== 'failing') {
      specialismStatus[info.specialism] = row.status === 'passed' ? 'passing' : 'failing'
    }
  }
  const tracks: Record<string, TrackState> = {}
  for (const [track, tally] of tallies) tracks[track] = trackState(tally)
  const passing = derived.latest.filter((row) => row.status === 'passed').length
  const failed = derived.latest.filter((row) => ['failed', 'error', 'partial'].includes(row.status))
  const statusChangedAt = settings.statusChangedAt
  return {
    tracks,
    trackDetails: [...tallies].map(([track, tally]) => ({
      track,
      status: trackState(tally),
      scenario_count: tally.total,
      passed_count: tally.passed,
      duration_ms: tally.ms,
    })),
    specialismStatus,
    storyboards: storyboardRows(derived, catalog),
    passing,
    total: derived.latest.length,
    lastPassedAt: newestOf(derived.lastPassed.values()),
    lastFailedAt: newestOf(failed.map((row) => row.finished_at)),
    streakDays:
      derived.status === 'passing' && statusChangedAt
        ? Math.max(0, Math.floor((now - Date.parse(statusChangedAt)) / DAY_MS))
        : 0,
    headline:
      derived.latest.length === 0 ? null : `${passing} of ${derived.latest.length} storyboards passing`,
  }
}

/**
 * The membership fields of `AgentComplianceDetail`, shown only to the agent's owner (`null` / `false` to anyone
 * else), and the `verdict_source` of the newest outcome's trigger.
 *
 * @example
 * ownerFields(true, 'member', 'refresh') // { membership_tier: 'member', membership_tier_label: 'Member', …, verdict_source: 'owner_test' }
 */
export function ownerFields(owner: boolean, tier: MembershipTier, newestTrigger: string | undefined) {
  return {
    membership_tier: owner ? tier : null,
    membership_tier_label: owner ? (TIER_LABELS[tier] ?? tier) : null,
    subscription_status: owner ? ('active' as const) : null,
    is_api_access_tier: owner && hasApiAccess(tier),
    verdict_source:
      owner && newestTrigger !== undefined ? (TRIGGER_SOURCE[newestTrigger] ?? ('manual' as const)) : null,
  }
}
