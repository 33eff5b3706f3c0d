/**
 * Registry-hosted publisher domains: who owns a domain (bound by a verified claim), the origin-verification
 * state of its hosted adagents.json, and the pending claim tokens of the bind-on-verify flow.
 */
import type { SqlDriver } from '@adwire/sql'

/** The verification state and owner of a domain. */
export interface HostedDomain {
  readonly domain: string
  readonly owner_org_id: string | null
  readonly owner_bound_at: string | null
  /** When the origin last proved it points at the hosted file; `null` when never or the last check failed. */
  readonly origin_verified_at: string | null
  readonly origin_last_checked_at: string | null
  readonly last_reason: string | null
  readonly last_detail: string | null
}

/** A pending claim: the token an origin pointer carries to bind the domain to `org_id`. */
export interface DomainClaim {
  readonly token: string
  readonly domain: string
  readonly org_id: string
  readonly created_at: string
}

/** The outcome of one origin check, as stored. */
export interface OriginCheck {
  readonly at: string
  readonly reason: string
  readonly detail?: string
  /** `verified`: stamp `origin_verified_at`; `demoted`: clear it; `unchanged`: only the check time (transient). */
  readonly effect: 'verified' | 'demoted' | 'unchanged'
}

export interface HostingStore {
  getHostedDomain(domain: string): Promise<HostedDomain | undefined>
  createClaim(claim: DomainClaim): Promise<void>
  /** The claim with this token, if it was issued at or after `sinceIso`. */
  getClaim(token: string, sinceIso: string): Promise<DomainClaim | undefined>
  recordCheck(domain: string, check: OriginCheck): Promise<HostedDomain>
  /**
   * Binds `domain` to `orgId` unless another organization already owns it (an owner is never overwritten);
   * resolves to the owner after the call.
   */
  bindOwner(domain: string, orgId: string, at: string): Promise<string>
  /** Deletes claims issued before `beforeIso`; resolves to how many. */
  pruneClaims(beforeIso: string): Promise<number>
}

const COLUMNS =
  'domain, owner_org_id, owner_bound_at, origin_verified_at, origin_last_checked_at, last_reason, last_detail'

/** The hosting statements on `db`. */
export function hostingStore(db: SqlDriver): HostingStore {
  const get = (domain: string) =>
    db.one<HostedDomain>(`SELECT ${COLUMNS} FROM registry_hosted_domains WHERE domain = ?`, [domain])
  const ensure = (domain: string) =>
    db.run('INSERT INTO registry_hosted_domains (domain) VALUES (?) ON CONFLICT (domain) DO NOTHING', [
      domain,
    ])
  return {
    getHostedDomain: get,
    async createClaim(claim) {
      await db.run(
        'INSERT INTO registry_domain_claims (token, domain, org_id, created_at) VALUES (?, ?, ?, ?)',
        [claim.token, claim.domain, claim.org_id, claim.created_at],
      )
    },
    getClaim: (token, sinceIso) =>
      db.one<DomainClaim>(
        'SELECT token, domain, org_id, created_at FROM registry_domain_claims WHERE token = ? AND created_at >= ?',
        [token, sinceIso],
      ),
    async recordCheck(domain, check) {
      await ensure(domain)
      const verified =
        check.effect === 'verified'
          ? 'origin_verified_at = ?,'
          : check.effect === 'demoted'
            ? 'origin_verified_at = NULL,'
            : ''
      await db.run(
        `UPDATE registry_hosted_domains SET ${verified} origin_last_checked_at = ?, last_reason = ?, last_detail = ?
         WHERE domain = ?`,
        [
          ...(check.effect === 'verified' ? [check.at] : []),
          check.at,
          check.reason,
          check.detail ?? null,
          domain,
        ],
      )
      return (await get(domain))!
    },
    async bindOwner(domain, orgId, at) {
      await ensure(domain)
      await db.run(
        'UPDATE registry_hosted_domains SET owner_org_id = ?, owner_bound_at = ? WHERE domain = ? AND owner_org_id IS NULL',
        [orgId, at, domain],
      )
      return (await get(domain))!.owner_org_id!
    },
    pruneClaims: (beforeIso) =>
      db.run('DELETE FROM registry_domain_claims WHERE created_at < ?', [beforeIso]),
  }
}
