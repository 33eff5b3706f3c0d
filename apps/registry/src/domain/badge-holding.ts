/**
 * Which badge a role holds (registry.yaml `getAgentBadgeSvg`, `getAgentBadgeEmbed` and their version-pinned
 * forms): the verified badge of that role at the highest AdCP release, or at the pinned release only.
 */
import type { BadgeRole } from '../compliance/status-catalog.js'
import { compareRelease, type VerificationBadge } from '../compliance/status.js'

/**
 * The badge `role` holds among `badges`, or `undefined` (not verified for that role, or not at `pinned`).
 *
 * @example
 * heldBadge(badges, 'sales') // the sales badge of the highest release
 * heldBadge(badges, 'sales', '3.0') // only a 3.0 sales badge
 */
export function heldBadge<Badge extends Pick<VerificationBadge, 'role' | 'adcp_version'>>(
  badges: readonly Badge[],
  role: BadgeRole,
  pinned?: string,
): Badge | undefined {
  return badges
    .filter((badge) => badge.role === role && (pinned === undefined || badge.adcp_version === pinned))
    .sort((a, b) => compareRelease(b.adcp_version, a.adcp_version))[0]
}
