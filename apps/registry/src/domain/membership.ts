/**
 * The membership-tier gate of member agent visibility (registry.yaml `registerMemberAgent`; adcp-notes §1.4.2,
 * §7 #33): `public` needs a tier with API access; any other tier stores `members_only` and answers a
 * `visibility_downgraded` warning.
 *
 * A self-hosted mirror has no billing flow, so every organization has the tier the operator configures
 * (`MEMBER_TIER`, default `member`): `explorer` is the upstream free tier without API access, the others are
 * the paid tiers the upstream document names (Professional, Builder, Member, Leader).
 */
import type { Visibility } from './types.js'

/** The membership tiers this registry knows, lowest first. */
export const MEMBERSHIP_TIERS = ['explorer', 'professional', 'builder', 'member', 'leader'] as const

export type MembershipTier = (typeof MEMBERSHIP_TIERS)[number]

/** Whether `tier` carries API access (and so may publish agents as `public`). */
export const hasApiAccess = (tier: MembershipTier): boolean => tier !== 'explorer'

/** The `visibility_downgraded` warning of the wire `MemberAgentResponse`. */
export interface VisibilityWarning {
  readonly code: 'visibility_downgraded'
  readonly agent_url: string
  readonly requested: 'public'
  readonly applied: 'members_only'
  readonly reason: 'tier_required'
  readonly message: string
}

/**
 * The visibility stored for a requested one under `tier`, and the warning when it was lowered.
 *
 * @example
 * gateVisibility('public', 'explorer', 'https://agent.example/mcp').visibility // 'members_only'
 * gateVisibility('public', 'member', 'https://agent.example/mcp').warning // undefined
 */
export function gateVisibility(
  requested: Visibility,
  tier: MembershipTier,
  agentUrl: string,
): { visibility: Visibility; warning?: VisibilityWarning } {
  if (requested !== 'public' || hasApiAccess(tier)) return { visibility: requested }
  return {
    visibility: 'members_only',
    warning: {
      code: 'visibility_downgraded',
      agent_url: agentUrl,
      requested: 'public',
      applied: 'members_only',
      reason: 'tier_required',
      message: `public visibility needs a membership tier with API access (professional, builder, member or leader); this organization's tier is ${tier}, so the agent is stored as members_only`,
    },
  }
}
