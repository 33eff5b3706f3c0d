/**
 * The operator lookup (`GET /api/registry/operator`): the agents an entity operates (member agents whose URL is
 * on the domain's registrable domain, and agents that publishers' adagents.json files name there) and which
 * publishers trust them. Visibility follows the document: anonymous callers see `public` agents, authenticated
 * callers of a tier with API access also `members_only` ones, and the owning organization its `private` ones;
 * `scope` only narrows (`public`, `member` = public + members_only, `private`, `all`). Agents named only by
 * adagents.json files are public facts.
 */
import { registrableDomain } from '@adwire/http-signatures/internal'
import type { Context } from 'hono'
import { compact } from '../db/json.js'
import { hasApiAccess } from '../domain/membership.js'
import { canonicalAgentUrl, isHttpUrl } from '../domain/names.js'
import type { MemberAgent, Visibility } from '../domain/types.js'
import type { RegistryDeps } from '../deps.js'

interface OperatorAgent {
  url: string
  name: string
  type: string
  authorized_by: Array<{ publisher_domain: string; authorized_for?: string; source: 'adagents_json' }>
}

const BUCKETS: Record<string, readonly Visibility[]> = {
  public: ['public'],
  member: ['public', 'members_only'],
  private: ['private'],
  all: ['public', 'members_only', 'private'],
}

/** The `OperatorLookupResult` for `domain` as the caller of `c` may see it. */
export async function operatorLookup(
  c: Context,
  deps: RegistryDeps,
  domain: string,
  scope: string,
): Promise<{ domain: string; member: Record<string, unknown> | null; agents: OperatorAgent[] }> {
  const { repository } = deps
  const principal = await deps.auth.authenticate(c.req.raw)
  const callerOrg = principal?.orgId ?? (principal?.kind === 'org' ? principal.id : undefined)
  const site = registrableDomain(`https://${domain}`)
  const onDomain = (url: string) => isHttpUrl(url) && registrableDomain(url) === site

  const wanted = BUCKETS[scope]!
  const members = (await repository.members.listVisibleAgents(['public', 'members_only', 'private'])).filter(
    (agent) => onDomain(agent.url),
  )
  const visible = (agent: MemberAgent): boolean => {
    if (!wanted.includes(agent.visibility)) return false
    if (agent.visibility === 'public') return true
    if (agent.visibility === 'members_only')
      return callerOrg !== undefined && (agent.org_id === callerOrg || hasApiAccess(deps.memberTier))
    return callerOrg !== undefined && agent.org_id === callerOrg
  }
  // A member agent that is not visible hides its URL entirely, even when a publisher file names it.
  const hidden = new Set(
    members.filter((agent) => !visible(agent)).map((agent) => canonicalAgentUrl(agent.url)),
  )
  const agents = new Map<string, OperatorAgent>()
  for (const agent of members) {
    const key = canonicalAgentUrl(agent.url)
    if (hidden.has(key)) continue
    agents.set(key, {
      url: agent.url,
      name: agent.name ?? new URL(agent.url).host,
      type: agent.type,
      authorized_by: [],
    })
  }
  if (wanted.includes('public')) {
    for (const entry of await repository.authorizations.directory()) {
      const key = entry.agent_url_canonical
      if (!onDomain(entry.agent_url) || hidden.has(key) || agents.has(key)) continue
      agents.set(key, {
        url: entry.agent_url,
        name: new URL(entry.agent_url).host,
        type: 'sales',
        authorized_by: [],
      })
    }
  }
  for (const [key, agent] of agents) {
    const seen = new Set<string>()
    for (const row of await repository.authorizations.forAgent(key)) {
      if (seen.has(row.publisher_domain)) continue
      seen.add(row.publisher_domain)
      agent.authorized_by.push(
        compact({
          publisher_domain: row.publisher_domain,
          authorized_for: row.authorized_for ?? undefined,
          source: 'adagents_json' as const,
        }),
      )
    }
  }
  const owners = new Set(members.map((agent) => agent.org_id))
  let member: Record<string, unknown> | null = null
  if (owners.size === 1) {
    const profile = await repository.members.getMemberProfile([...owners][0]!)
    if (profile && (profile.is_public || profile.org_id === callerOrg))
      member = { slug: profile.org_id, display_name: profile.display_name }
  }
  return { domain, member, agents: [...agents.values()] }
}
