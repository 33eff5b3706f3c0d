/**
 * Agent Compliance, badges: the SVG badge of a role (plain `…/badge/{role}.svg` and version-pinned
 * `…/badge/{role}/{version}.svg`) and its embed code (`getAgentBadgeEmbed`, `getAgentBadgeVersionedEmbed`).
 * Badges are revalidated before reuse (a strong ETag, `no-cache`) so an opt-out shows at once.
 */
import { createHash } from 'node:crypto'
import { Hono, type Context } from 'hono'
import { embedSnippets, renderBadgeSvg } from '../compliance/badge.js'
import { BADGE_ROLES, isBadgeRole, type BadgeRole } from '../compliance/status-catalog.js'
import type { RegistryDeps } from '../deps.js'
import { heldBadge } from '../domain/badge-holding.js'
import { AGENT_BASE, agentOf } from './compliance-context.js'
import { verifiedBadges } from './compliance-detail.js'
import type { ResponseBody } from './contract-types.js'
import { HttpError, reply } from './http.js'

type Embed = ResponseBody<'/api/registry/agents/{encodedUrl}/badge/{role}/embed', 'get'>

/** The `role` path parameter, or 400 `invalid_role` with the valid roles. */
function roleParam(role: string): BadgeRole {
  if (isBadgeRole(role)) return role
  throw new HttpError(400, 'invalid_role', `${role} is not a badge role`, {
    code: 'invalid_role',
    valid_roles: [...BADGE_ROLES],
  })
}

/** The `version` path parameter: an AdCP release, MAJOR.MINOR. */
function versionParam(value: string): string {
  if (!/^[0-9]{1,3}\.[0-9]{1,3}$/.test(value)) {
    throw new HttpError(400, 'invalid_version', 'version must be an AdCP release as MAJOR.MINOR (e.g. 3.1)', {
      details: { parameter: 'version' },
    })
  }
  return value
}

/** Sends a badge SVG with a strong ETag that must be revalidated before reuse (opt-out shows at once). */
function svgResponse(c: Context, svg: string): Response {
  const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`
  const headers = {
    'content-type': 'image/svg+xml; charset=utf-8',
    'cache-control': 'no-cache',
    etag,
  }
  const match = c.req.header('if-none-match')
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    return new Response(null, { status: 304, headers })
  }
  return new Response(svg, { status: 200, headers })
}

/**
 * The badge routes.
 *
 * @example
 * app.route('/', complianceBadgeRoutes(deps))
 */
export function complianceBadgeRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()

  /** The badge a role holds: the highest release, or the one pinned. */
  const badgeState = async (c: Context, agentUrl: string, role: BadgeRole, pinned?: string) => {
    const { link, badges } = await verifiedBadges(deps, c, agentUrl)
    return { link, held: heldBadge(badges, role, pinned) }
  }

  const embed = async (c: Context, operationId: string, role: BadgeRole, pinned?: string) => {
    const agentUrl = agentOf(c)
    const { link, held } = await badgeState(c, agentUrl, role, pinned)
    const svgUrl = link.badge(role, pinned)
    const version = pinned ?? held?.adcp_version
    const body: Embed = {
      agent_url: agentUrl,
      role,
      verified: held !== undefined,
      ...(version !== undefined ? { adcp_version: version } : {}),
      badge_svg_url: svgUrl,
      registry_url: link.registry,
      ...embedSnippets({
        svgUrl,
        registryUrl: link.registry,
        role,
        verified: held !== undefined,
        ...(pinned ? { version: pinned } : {}),
      }),
    }
    return reply(c, deps, operationId, body)
  }

  const svg = async (c: Context, role: BadgeRole, pinned?: string) => {
    const agentUrl = agentOf(c)
    const { held } = await badgeState(c, agentUrl, role, pinned)
    return svgResponse(
      c,
      renderBadgeSvg({
        role,
        verified: held !== undefined,
        ...(pinned ? { version: pinned } : held ? { version: held.adcp_version } : {}),
      }),
    )
  }

  // `/badge/{role}.svg`
  app.get(`${AGENT_BASE}/badge/:file`, async (c, next) => {
    const file = c.req.param('file')
    if (!file.endsWith('.svg')) return next()
    agentOf(c)
    return svg(c, roleParam(file.slice(0, -'.svg'.length)))
  })

  // `/badge/{role}/embed` and `/badge/{role}/{version}.svg`
  app.get(`${AGENT_BASE}/badge/:role/:file`, async (c, next) => {
    const file = c.req.param('file')
    const operation = file === 'embed' ? 'getAgentBadgeEmbed' : file.endsWith('.svg') ? 'svg' : undefined
    if (!operation) return next()
    agentOf(c)
    const role = roleParam(c.req.param('role'))
    if (operation === 'getAgentBadgeEmbed') return embed(c, operation, role)
    return svg(c, role, versionParam(file.slice(0, -'.svg'.length)))
  })

  app.get(`${AGENT_BASE}/badge/:role/:version/embed`, async (c) => {
    agentOf(c)
    const role = roleParam(c.req.param('role'))
    return embed(c, 'getAgentBadgeVersionedEmbed', role, versionParam(c.req.param('version')))
  })

  return app
}
