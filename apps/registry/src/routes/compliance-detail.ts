/**
 * Agent Compliance, status: the compliance detail of an agent (`getAgentCompliance`) and its verification
 * (`getAgentVerification`). Everything is derived from the stored outcomes and settings
 * (`domain/compliance-summary.ts`); an agent with no outcome is `unknown` and unverified, as the document
 * answers for an untested agent.
 */
import { Hono, type Context } from 'hono'
import type { RegistryDeps } from '../deps.js'
import { ownerFields, summarizeCompliance } from '../domain/compliance-summary.js'
import { releaseOf } from '../compliance/status.js'
import { AGENT_BASE, agentLinks, agentOf, serviceOf } from './compliance-context.js'
import type { ResponseBody } from './contract-types.js'
import { reply } from './http.js'

type Detail = ResponseBody<'/api/registry/agents/{encodedUrl}/compliance', 'get'>
type Verification = ResponseBody<'/api/registry/agents/{encodedUrl}/verification', 'get'>

/** Whether the request carries a credential of an organization that lists the agent as its member agent. */
async function isOwner(c: Context, deps: RegistryDeps, agentUrl: string): Promise<boolean> {
  if (!c.req.header('authorization')) return false
  const principal = await deps.auth.authenticate(c.req.raw)
  const orgId = principal?.orgId ?? (principal?.kind === 'org' ? principal.id : undefined)
  return orgId !== undefined && (await deps.repository.members.getMemberAgent(orgId, agentUrl)) !== undefined
}

/**
 * The verified badges of an agent, each with its SVG link, and the agent's links.
 *
 * @example
 * const { badges } = await verifiedBadges(deps, c, agentUrl)
 */
export async function verifiedBadges(deps: RegistryDeps, c: Context, agentUrl: string) {
  const { derived } = await serviceOf(deps).read(agentUrl)
  const link = agentLinks(deps, c, agentUrl)
  return { link, badges: derived.badges.map((badge) => ({ ...badge, badge_url: link.badge(badge.role) })) }
}

/**
 * The compliance detail and verification routes.
 *
 * @example
 * app.route('/', complianceDetailRoutes(deps))
 */
export function complianceDetailRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()

  app.get(`${AGENT_BASE}/compliance`, async (c) => {
    const agentUrl = agentOf(c)
    const service = serviceOf(deps)
    const { settings, derived } = await service.read(agentUrl)
    const link = agentLinks(deps, c, agentUrl)
    const badges = derived.badges.map((badge) => ({ ...badge, badge_url: link.badge(badge.role) }))
    if (settings.optOut) {
      const body: Detail = {
        agent_url: agentUrl,
        status: 'opted_out',
        lifecycle_stage: settings.lifecycleStage,
        compliance_opt_out: true,
        badge_requalification_required: derived.requalificationRequired,
        verified: false,
        verified_badges: [],
      }
      return reply(c, deps, 'getAgentCompliance', body)
    }
    const owner = await isOwner(c, deps, agentUrl)
    const summary = summarizeCompliance(derived, settings, service.catalog, deps.now())
    const newest = derived.newest
    const body: Detail = {
      agent_url: agentUrl,
      requested_compliance_target: newest ? releaseOf(newest.adcp_version) : null,
      adcp_version: newest?.adcp_version ?? null,
      status: derived.status,
      lifecycle_stage: settings.lifecycleStage,
      compliance_opt_out: false,
      badge_requalification_required: derived.requalificationRequired,
      tracks: summary.tracks,
      track_details: summary.trackDetails,
      streak_days: summary.streakDays,
      last_checked_at: settings.lastCheckedAt ?? newest?.finished_at ?? null,
      last_passed_at: summary.lastPassedAt,
      last_failed_at: summary.lastFailedAt,
      headline: summary.headline,
      status_changed_at: settings.statusChangedAt,
      storyboards_passing: summary.passing,
      storyboards_total: summary.total,
      check_interval_hours: settings.intervalHours,
      declared_specialisms: Object.keys(summary.specialismStatus).sort(),
      specialism_status: summary.specialismStatus,
      storyboard_statuses: summary.storyboards,
      notices: [],
      observations: [],
      ...ownerFields(owner, deps.memberTier, newest?.run_trigger),
      verified: badges.length > 0,
      verified_badges: badges,
    }
    return reply(c, deps, 'getAgentCompliance', body)
  })

  app.get(`${AGENT_BASE}/verification`, async (c) => {
    const agentUrl = agentOf(c)
    const { link, badges } = await verifiedBadges(deps, c, agentUrl)
    const body: Verification = {
      agent_url: agentUrl,
      verified: badges.length > 0,
      badges,
      registry_url: link.registry,
    }
    return reply(c, deps, 'getAgentVerification', body)
  })

  return app
}
