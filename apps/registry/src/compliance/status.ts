/**
 * Compliance status, verification and badges, derived from the stored storyboard outcomes (the
 * {@link ComplianceOutcomeSink} of the runs side) and the agent's settings:
 *
 * - **status**: the latest outcome of each storyboard decides it: all passing `passing`, none `failing`, a mix
 *   `degraded`; no outcome at all `unknown`; opted out `opted_out`.
 * - **badges**: a badge for role R at AdCP release V (MAJOR.MINOR) comes only from the latest *full-suite* run
 *   at V — a run this side launched (heartbeat or refresh) without a storyboard filter — in which every
 *   storyboard passed and at least one storyboard of R's protocol or specialisms ran. Single-storyboard reruns
 *   change the status, never the badges. Opting out suppresses every badge at once; after opting back in a
 *   badge needs a passing full-suite run that *started* after the opt-in (`badge_requalification_required`).
 *   Badges also need a membership tier with API access (`MEMBER_TIER`).
 */
import type { Schemas } from '@adwire/registry-client'
import type { ComplianceOutcomeSink, StoryboardOutcome } from './contract.js'
import { storyboardCatalog, type BadgeRole, type StoryboardCatalog } from './status-catalog.js'
import type { AgentSettings, ComplianceStatusStore, OutcomeRow } from './status-store.js'

/** A specialism a `VerificationBadge` may list (the document's enum). */
type BadgeSpecialism = Schemas['VerificationBadge']['verified_specialisms'][number]

const BADGE_SPECIALISMS: ReadonlySet<string> = new Set<BadgeSpecialism>([
  'audience-sync',
  'brand-rights',
  'collection-lists',
  'content-standards',
  'creative-ad-server',
  'creative-generative',
  'creative-template',
  'creative-transformers',
  'governance-aware-seller',
  'governance-delivery-monitor',
  'governance-spend-authority',
  'property-lists',
  'sales-broadcast-tv',
  'sales-catalog-driven',
  'sales-guaranteed',
  'sales-non-guaranteed',
  'sales-proposal-mode',
  'sales-social',
  'signal-marketplace',
  'signal-owned',
  'signed-requests',
  'sponsored-intelligence',
])

const isBadgeSpecialism = (value: string): value is BadgeSpecialism => BADGE_SPECIALISMS.has(value)

export type ComplianceState = 'passing' | 'degraded' | 'failing' | 'unknown' | 'opted_out'

export interface VerificationBadge {
  role: BadgeRole
  adcp_version: string
  verified_at: string
  verified_specialisms: BadgeSpecialism[]
  verification_modes: ['spec']
  verified_protocol_version: string | null
}

/** `3.1.19` → `3.1` (the release a badge is issued against). */
export const releaseOf = (version: string): string => {
  const match = /^(\d+)\.(\d+)/.exec(version)
  return match ? `${match[1]}.${match[2]}` : version
}

/** Compares MAJOR.MINOR releases numerically. */
export const compareRelease = (a: string, b: string): number => {
  const [am = 0, an = 0] = a.split('.').map(Number)
  const [bm = 0, bn = 0] = b.split('.').map(Number)
  return am - bm || an - bn
}

const storyboardState = (status: OutcomeRow['status']): 'passing' | 'failing' | 'partial' =>
  status === 'passed' ? 'passing' : status === 'partial' ? 'partial' : 'failing'

interface Run {
  runId: string
  release: string
  version: string
  startedAt: string
  finishedAt: string
  outcomes: OutcomeRow[]
}

/** What the stored outcomes say about one agent. */
export interface Derived {
  status: ComplianceState
  /** The latest outcome of each storyboard, in storyboard id order. */
  latest: OutcomeRow[]
  /** When each storyboard last passed. */
  lastPassed: Map<string, string>
  badges: VerificationBadge[]
  requalificationRequired: boolean
  /** The newest outcome overall. */
  newest: OutcomeRow | undefined
}

/** Derives status and badges from an agent's outcomes (oldest first), its full-suite run ids and settings. */
export function derive(
  outcomes: readonly OutcomeRow[],
  fullSuiteRuns: ReadonlySet<string>,
  settings: AgentSettings,
  catalog: StoryboardCatalog,
  badgesAllowed: boolean,
): Derived {
  const latestBy = new Map<string, OutcomeRow>()
  const lastPassed = new Map<string, string>()
  for (const outcome of outcomes) {
    const current = latestBy.get(outcome.storyboard_id)
    if (!current || current.finished_at <= outcome.finished_at) latestBy.set(outcome.storyboard_id, outcome)
    if (outcome.status === 'passed') lastPassed.set(outcome.storyboard_id, outcome.finished_at)
  }
  const latest = [...latestBy.values()].sort((a, b) => a.storyboard_id.localeCompare(b.storyboard_id))
  const passing = latest.filter((row) => row.status === 'passed').length
  const status: ComplianceState = settings.optOut
    ? 'opted_out'
    : latest.length === 0
      ? 'unknown'
      : passing === latest.length
        ? 'passing'
        : passing === 0
          ? 'failing'
          : 'degraded'

  const runs = new Map<string, Run>()
  for (const outcome of outcomes) {
    if (!fullSuiteRuns.has(outcome.run_id)) continue
    const run = runs.get(outcome.run_id) ?? {
      runId: outcome.run_id,
      release: releaseOf(outcome.adcp_version),
      version: outcome.adcp_version,
      startedAt: outcome.started_at,
      finishedAt: outcome.finished_at,
      outcomes: [],
    }
    run.outcomes.push(outcome)
    if (outcome.started_at < run.startedAt) run.startedAt = outcome.started_at
    if (outcome.finished_at > run.finishedAt) run.finishedAt = outcome.finished_at
    runs.set(outcome.run_id, run)
  }
  const allPassed = (run: Run) => run.outcomes.every((row) => row.status === 'passed')
  const since = settings.requalifySince
  const requalificationRequired =
    since !== null &&
    (settings.optOut || ![...runs.values()].some((run) => run.startedAt >= since && allPassed(run)))

  const badges: VerificationBadge[] = []
  if (!settings.optOut && badgesAllowed) {
    const latestRun = new Map<string, Run>()
    for (const run of runs.values()) {
      const current = latestRun.get(run.release)
      if (!current || current.finishedAt <= run.finishedAt) latestRun.set(run.release, run)
    }
    for (const run of [...latestRun.values()].sort((a, b) => compareRelease(a.release, b.release))) {
      if (!allPassed(run) || (since !== null && run.startedAt < since)) continue
      const byRole = new Map<BadgeRole, Set<BadgeSpecialism>>()
      for (const row of run.outcomes) {
        const info = catalog.info(row.storyboard_id)
        if (!info.role) continue
        const specialisms = byRole.get(info.role) ?? new Set<BadgeSpecialism>()
        if (info.specialism && info.stableSpecialism && isBadgeSpecialism(info.specialism)) {
          specialisms.add(info.specialism)
        }
        byRole.set(info.role, specialisms)
      }
      for (const [role, specialisms] of [...byRole].sort(([a], [b]) => a.localeCompare(b))) {
        badges.push({
          role,
          adcp_version: run.release,
          verified_at: run.finishedAt,
          verified_specialisms: [...specialisms].sort(),
          verification_modes: ['spec'],
          verified_protocol_version: run.version,
        })
      }
    }
  }
  return {
    status,
    latest,
    lastPassed,
    badges,
    requalificationRequired,
    newest: outcomes.reduce<OutcomeRow | undefined>(
      (newest, row) => (!newest || newest.finished_at <= row.finished_at ? row : newest),
      undefined,
    ),
  }
}

/** The status side's service: the outcome sink the runs side reports to, and the reads the routes answer from. */
export interface ComplianceStatusService extends ComplianceOutcomeSink {
  readonly store: ComplianceStatusStore
  readonly catalog: StoryboardCatalog
  /**
   * The outbound fetch of refresh probes and token-endpoint tests (SSRF-safe and time-boxed in the service).
   */
  readonly fetch: typeof globalThis.fetch
  /** Local use and tests: agents and token endpoints may be plain-http loopback/private addresses. */
  readonly allowPrivate: boolean
  /** Whether badges may be issued (the membership tier has API access). */
  readonly badgesAllowed: boolean
  /** Settings and everything derived for one agent. */
  read(agentUrl: string): Promise<{ settings: AgentSettings; derived: Derived }>
  /** Called when an agent's schedule changed (the scheduler re-reads due times). */
  onScheduleChange(listener: () => void): void
  scheduleChanged(): void
}

export function createComplianceStatus(
  store: ComplianceStatusStore,
  options: {
    now: () => number
    badgesAllowed: boolean
    fetch: typeof globalThis.fetch
    allowPrivate: boolean
    catalog?: StoryboardCatalog
    log?: (entry: Record<string, unknown>) => void
  },
): ComplianceStatusService {
  const catalog = options.catalog ?? storyboardCatalog()
  const listeners: Array<() => void> = []
  const read = async (agentUrl: string) => {
    const settings = await store.settings(agentUrl, options.now())
    const [outcomes, full] = await Promise.all([store.outcomes(agentUrl), store.fullSuiteRuns(agentUrl)])
    return { settings, derived: derive(outcomes, full, settings, catalog, options.badgesAllowed) }
  }
  return {
    store,
    catalog,
    fetch: options.fetch,
    allowPrivate: options.allowPrivate,
    badgesAllowed: options.badgesAllowed,
    read,
    async record(outcome: StoryboardOutcome) {
      await store.recordOutcome(outcome)
      const { settings, derived } = await read(outcome.agentUrl)
      if (settings.lastStatus !== derived.status || !settings.stored) {
        await store.updateSettings(outcome.agentUrl, options.now(), (current) =>
          current.lastStatus === derived.status
            ? {}
            : { lastStatus: derived.status, statusChangedAt: outcome.finishedAt },
        )
        if (settings.lastStatus !== derived.status) {
          options.log?.({ compliance_status: derived.status, agent_url: outcome.agentUrl })
        }
      }
    },
    onScheduleChange(listener) {
      listeners.push(listener)
    },
    scheduleChanged() {
      for (const listener of listeners) listener()
    },
  }
}

export { storyboardState }
