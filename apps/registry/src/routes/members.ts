/** Onboarding (`POST /api/organizations`) and Member Agents (`/api/me/agents`). */
import { Hono } from 'hono'
import { compact } from '../db/json.js'
import { gateVisibility } from '../domain/membership.js'
import type { AgentType, MemberAgent, OrgProfile, Visibility } from '../domain/types.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, HttpError, readBody, reply, requireOrg, requirePrincipal } from './http.js'

const wire = (agent: MemberAgent) =>
  compact({
    url: agent.url,
    visibility: agent.visibility,
    type: agent.type,
    name: agent.name,
    health_check_url: agent.health_check_url,
  })

/**
 * The organization `POST /api/me/agents` creates when the caller's has none yet (registry.yaml
 * `registerMemberAgent`: org auto-bootstrap), named as the credential's organization (`adwire registry admin
 * create-org --name`).
 */
const derivedOrganization = (orgId: string, orgName: string | undefined, at: string): OrgProfile => ({
  org_id: orgId,
  name: orgName?.trim() || orgId,
  is_personal: false,
  marketing_opt_in: false,
  created_at: at,
})

/** The member routes. */
export function memberRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps

  app.post('/api/organizations', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const orgId = requireOrg(principal)
    const body = await readBody<{
      organization_name: string
      is_personal?: boolean
      company_type?: string
      revenue_tier?: string
      marketing_opt_in?: boolean
    }>(c, 'createOrganization')
    const { profile, created } = await repository.members.createOrgProfile(
      compact({
        org_id: orgId,
        name: body.organization_name.trim(),
        is_personal: body.is_personal ?? false,
        company_type: body.company_type,
        revenue_tier: body.revenue_tier,
        marketing_opt_in: body.marketing_opt_in ?? false,
        created_at: new Date(deps.now()).toISOString(),
      }),
    )
    if (!created) {
      throw new HttpError(
        409,
        'organization_exists',
        `your organization is already set up as "${profile.name}"`,
        { existing_org_id: profile.org_id, existing_org_name: profile.name },
      )
    }
    return reply(
      c,
      deps,
      'createOrganization',
      { success: true, organization: { id: orgId, name: profile.name } },
      201,
    )
  })

  app.get('/api/me/agents', async (c) => {
    const orgId = requireOrg(await requirePrincipal(c, deps), c.req.query('org'))
    const agents = await repository.members.listMemberAgents(orgId)
    return reply(c, deps, 'listMemberAgents', { agents: agents.map(wire) })
  })

  app.post('/api/me/agents', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const orgId = requireOrg(principal, c.req.query('org'))
    const body = await readBody<{
      url: string
      type: AgentType
      name?: string
      visibility?: Visibility
      health_check_url?: string
    }>(c, 'registerMemberAgent')
    agentUrlParam(body.url, 'url')
    if (body.health_check_url !== undefined) agentUrlParam(body.health_check_url, 'health_check_url')
    const at = new Date(deps.now()).toISOString()
    const existing = await repository.members.getMemberAgent(orgId, body.url)
    const gate = body.visibility && gateVisibility(body.visibility, deps.memberTier, body.url)
    const agent: MemberAgent = compact({
      org_id: orgId,
      url: existing?.url ?? body.url,
      name: body.name ?? existing?.name,
      type: body.type,
      visibility: gate?.visibility ?? existing?.visibility ?? 'private',
      health_check_url: body.health_check_url ?? existing?.health_check_url,
      created_at: existing?.created_at ?? at,
      updated_at: at,
    })
    const { created, orgCreated, profileCreated } = await repository.members.registerMemberAgent(
      agent,
      derivedOrganization(orgId, principal.orgName, at),
    )
    return reply(
      c,
      deps,
      'registerMemberAgent',
      {
        agent: wire(agent),
        ...(gate?.warning ? { warnings: [gate.warning] } : {}),
        ...(orgCreated ? { org_auto_created: true } : {}),
        ...(profileCreated ? { profile_auto_created: true } : {}),
      },
      created ? 201 : 200,
    )
  })

  app.patch('/api/me/agents/:url', async (c) => {
    const orgId = requireOrg(await requirePrincipal(c, deps), c.req.query('org'))
    const url = agentUrlParam(c.req.param('url'), 'url')
    const body = await readBody<{
      url?: string
      name?: string
      visibility?: Visibility
      type?: AgentType
      health_check_url?: string
    }>(c, 'updateMemberAgent')
    if (body.health_check_url !== undefined) agentUrlParam(body.health_check_url, 'health_check_url')
    const existing = await repository.members.getMemberAgent(orgId, url)
    if (!existing) throw new HttpError(404, 'agent_not_found', `no agent ${url} on your member profile`)
    if (body.url !== undefined && body.url !== existing.url)
      throw new HttpError(
        400,
        'url_immutable',
        'an agent URL cannot change; remove the agent and register the new URL',
      )
    const gate = body.visibility && gateVisibility(body.visibility, deps.memberTier, existing.url)
    const changes = compact({
      name: body.name,
      visibility: gate?.visibility,
      type: body.type,
      health_check_url: body.health_check_url,
    }) as Partial<MemberAgent>
    const agent: MemberAgent = { ...existing, ...changes, updated_at: new Date(deps.now()).toISOString() }
    await repository.members.putMemberAgent(agent)
    return reply(c, deps, 'updateMemberAgent', {
      agent: wire(agent),
      ...(gate?.warning ? { warnings: [gate.warning] } : {}),
    })
  })

  app.delete('/api/me/agents/:url', async (c) => {
    const orgId = requireOrg(await requirePrincipal(c, deps), c.req.query('org'))
    const url = agentUrlParam(c.req.param('url'), 'url')
    const existing = await repository.members.getMemberAgent(orgId, url)
    if (!existing) throw new HttpError(404, 'agent_not_found', `no agent ${url} on your member profile`)
    if (existing.visibility === 'public')
      throw new HttpError(
        409,
        'unpublish_first',
        'the agent is public; set its visibility to members_only or private first',
      )
    await repository.members.deleteMemberAgent(orgId, url)
    return c.body(null, 204)
  })

  return app
}
