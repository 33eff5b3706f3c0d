/** Member agents (per organization) and organization profiles. */
import type { AgentType, MemberAgent, MemberProfile, OrgProfile, Visibility } from '../domain/types.js'
import { canonicalAgentUrl } from '../domain/names.js'
import type { SqlDriver, SqlExecutor } from '@adwire/sql'
import { compact } from './json.js'

interface MemberAgentRow {
  org_id: string
  url: string
  name: string | null
  type: AgentType
  visibility: Visibility
  health_check_url: string | null
  created_at: string
  updated_at: string
}

const toAgent = (row: MemberAgentRow): MemberAgent => compact({ ...row }) as MemberAgent
const AGENT_COLUMNS = 'org_id, url, name, type, visibility, health_check_url, created_at, updated_at'

export interface MemberStore {
  listMemberAgents(orgId: string): Promise<MemberAgent[]>
  /** Every agent whose visibility is in `visibilities`, across organizations. */
  listVisibleAgents(visibilities: readonly Visibility[]): Promise<MemberAgent[]>
  getMemberAgent(orgId: string, url: string): Promise<MemberAgent | undefined>
  /** Inserts or updates (by canonical URL); resolves to whether it was created. */
  putMemberAgent(agent: MemberAgent): Promise<{ created: boolean }>
  /**
   * Registers `agent` in one transaction with the bootstrap of `POST /api/me/agents`: creates `organization`
   * when the agent's organization has no profile yet, and a private member profile (named after the
   * organization) when it has none. Resolves to what was created.
   */
  registerMemberAgent(
    agent: MemberAgent,
    organization: OrgProfile,
  ): Promise<{ created: boolean; orgCreated: boolean; profileCreated: boolean }>
  getMemberProfile(orgId: string): Promise<MemberProfile | undefined>
  deleteMemberAgent(orgId: string, url: string): Promise<boolean>
  getOrgProfile(orgId: string): Promise<OrgProfile | undefined>
  /** Inserts unless one exists; resolves to the stored profile and whether it was created. */
  createOrgProfile(profile: OrgProfile): Promise<{ profile: OrgProfile; created: boolean }>
}

/** The member statements on `db`. */
export function memberStore(db: SqlDriver): MemberStore {
  const getOrgProfile = async (orgId: string): Promise<OrgProfile | undefined> => {
    const row = await db.one<
      Omit<OrgProfile, 'is_personal' | 'marketing_opt_in'> & { is_personal: number; marketing_opt_in: number }
    >('SELECT * FROM registry_org_profiles WHERE org_id = ?', [orgId])
    return (
      row &&
      (compact({
        ...row,
        is_personal: Number(row.is_personal) === 1,
        marketing_opt_in: Number(row.marketing_opt_in) === 1,
      }) as OrgProfile)
    )
  }
  return {
    async listMemberAgents(orgId) {
      const rows = await db.all<MemberAgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM registry_member_agents WHERE org_id = ? ORDER BY position, url`,
        [orgId],
      )
      return rows.map(toAgent)
    },
    async listVisibleAgents(visibilities) {
      if (visibilities.length === 0) return []
      const rows = await db.all<MemberAgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM registry_member_agents WHERE visibility IN (${visibilities.map(() => '?').join(', ')})
         ORDER BY url`,
        visibilities,
      )
      return rows.map(toAgent)
    },
    async getMemberAgent(orgId, url) {
      const row = await db.one<MemberAgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM registry_member_agents WHERE org_id = ? AND url_canonical = ?`,
        [orgId, canonicalAgentUrl(url)],
      )
      return row && toAgent(row)
    },
    putMemberAgent: (agent) => db.transaction((tx) => upsertAgent(tx, agent)),
    registerMemberAgent: (agent, organization) =>
      db.transaction(async (tx) => {
        const orgCreated = (await insertOrgProfile(tx, organization)) > 0
        const profile = (await tx.one<{ name: string }>(
          'SELECT name FROM registry_org_profiles WHERE org_id = ?',
          [agent.org_id],
        ))!
        const profileCreated =
          (await tx.run(
            `INSERT INTO registry_member_profiles (org_id, display_name, is_public, created_at)
             VALUES (?, ?, 0, ?) ON CONFLICT (org_id) DO NOTHING`,
            [agent.org_id, profile.name, agent.updated_at],
          )) > 0
        const { created } = await upsertAgent(tx, agent)
        return { created, orgCreated, profileCreated }
      }),
    async getMemberProfile(orgId) {
      const row = await db.one<Omit<MemberProfile, 'is_public'> & { is_public: number }>(
        'SELECT org_id, display_name, is_public, created_at FROM registry_member_profiles WHERE org_id = ?',
        [orgId],
      )
      return row && { ...row, is_public: Number(row.is_public) === 1 }
    },
    async deleteMemberAgent(orgId, url) {
      return (
        (await db.run('DELETE FROM registry_member_agents WHERE org_id = ? AND url_canonical = ?', [
          orgId,
          canonicalAgentUrl(url),
        ])) > 0
      )
    },
    getOrgProfile,
    async createOrgProfile(profile) {
      if ((await insertOrgProfile(db, profile)) > 0) return { profile, created: true }
      return { profile: (await getOrgProfile(profile.org_id))!, created: false }
    },
  }
}

/** Inserts an organization profile unless one exists; resolves to the rows inserted (0 or 1). */
function insertOrgProfile(db: SqlExecutor, profile: OrgProfile): Promise<number> {
  return db.run(
    `INSERT INTO registry_org_profiles (org_id, name, is_personal, company_type, revenue_tier, marketing_opt_in, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org_id) DO NOTHING`,
    [
      profile.org_id,
      profile.name,
      profile.is_personal ? 1 : 0,
      profile.company_type ?? null,
      profile.revenue_tier ?? null,
      profile.marketing_opt_in ? 1 : 0,
      profile.created_at,
    ],
  )
}

/** Inserts or updates a member agent by its canonical URL; resolves to whether it was created. */
async function upsertAgent(tx: SqlExecutor, agent: MemberAgent): Promise<{ created: boolean }> {
  const canonical = canonicalAgentUrl(agent.url)
  const existing = await tx.one<{ url: string }>(
    'SELECT url FROM registry_member_agents WHERE org_id = ? AND url_canonical = ?',
    [agent.org_id, canonical],
  )
  if (existing) {
    await tx.run(
      `UPDATE registry_member_agents SET name = ?, type = ?, visibility = ?, health_check_url = ?, updated_at = ?
         WHERE org_id = ? AND url_canonical = ?`,
      [
        agent.name ?? null,
        agent.type,
        agent.visibility,
        agent.health_check_url ?? null,
        agent.updated_at,
        agent.org_id,
        canonical,
      ],
    )
    return { created: false }
  }
  const position = await tx.one<{ n: number | null }>(
    'SELECT MAX(position) AS n FROM registry_member_agents WHERE org_id = ?',
    [agent.org_id],
  )
  await tx.run(
    `INSERT INTO registry_member_agents (org_id, url, url_canonical, name, type, visibility, health_check_url, position, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      agent.org_id,
      agent.url,
      canonical,
      agent.name ?? null,
      agent.type,
      agent.visibility,
      agent.health_check_url ?? null,
      Number(position?.n ?? 0) + 1,
      agent.created_at,
      agent.updated_at,
    ],
  )
  return { created: true }
}
