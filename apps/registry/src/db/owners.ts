/**
 * Who owns what the registry holds for several organizations (migration 10): the organization that first saved a
 * community property (`property`, by publisher domain), and the organization that proved control of an agent URL
 * (`agent`, by canonical agent URL). The authorization layer (`auth/authorize.ts`) reads it; nothing else decides
 * ownership.
 */
import { canonicalAgentUrl } from '../domain/names.js'
import type { SqlDriver } from '@adwire/sql'

export type OwnedKind = 'property' | 'agent'

export interface ResourceOwner {
  readonly org_id: string
  /** How ownership was established: `first_save` (property), `agent_control_file` (agent). */
  readonly proof: string
  readonly proven_at: string
}

export interface OwnerStore {
  /** The recorded owner of a resource, if any. */
  owner(kind: OwnedKind, resource: string): Promise<ResourceOwner | undefined>
  /**
   * Records `orgId` as the owner unless the resource already has one (an owner is never replaced by this call);
   * resolves to the owner after the call.
   */
  claim(kind: OwnedKind, resource: string, orgId: string, proof: string, at: string): Promise<ResourceOwner>
  /** Records `orgId` as the owner, replacing any previous one (a fresh proof of control wins). */
  prove(kind: OwnedKind, resource: string, orgId: string, proof: string, at: string): Promise<ResourceOwner>
  /** The organization that registered `agentUrl` first (member agents), if any. */
  firstRegistrant(agentUrl: string): Promise<string | undefined>
}

/** The resource key: canonical agent URL for agents, the domain as given (normalized by callers) otherwise. */
export const resourceKey = (kind: OwnedKind, resource: string): string =>
  kind === 'agent' ? canonicalAgentUrl(resource) : resource

/** The owner statements on `db`. */
export function ownerStore(db: SqlDriver): OwnerStore {
  const get = (kind: OwnedKind, resource: string) =>
    db.one<ResourceOwner>(
      'SELECT org_id, proof, proven_at FROM registry_resource_owners WHERE kind = ? AND resource = ?',
      [kind, resourceKey(kind, resource)],
    )
  return {
    owner: get,
    async claim(kind, resource, orgId, proof, at) {
      await db.run(
        `INSERT INTO registry_resource_owners (kind, resource, org_id, proof, proven_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (kind, resource) DO NOTHING`,
        [kind, resourceKey(kind, resource), orgId, proof, at],
      )
      return (await get(kind, resource))!
    },
    async prove(kind, resource, orgId, proof, at) {
      await db.run(
        `INSERT INTO registry_resource_owners (kind, resource, org_id, proof, proven_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (kind, resource) DO UPDATE SET org_id = excluded.org_id, proof = excluded.proof,
           proven_at = excluded.proven_at`,
        [kind, resourceKey(kind, resource), orgId, proof, at],
      )
      return (await get(kind, resource))!
    },
    async firstRegistrant(agentUrl) {
      const row = await db.one<{ org_id: string }>(
        `SELECT org_id FROM registry_member_agents WHERE url_canonical = ? ORDER BY created_at, org_id
         LIMIT 1`,
        [canonicalAgentUrl(agentUrl)],
      )
      return row?.org_id
    },
  }
}
