/**
 * Policy Registry: browse (`GET /api/policies/registry`), resolve one or many, revision history, and save a
 * community policy. Registry-curated policies (and pending ones) are read-only: a save answers 409, as does
 * an edit of a community policy another organization contributed. Every save appends a revision.
 */
import { Hono } from 'hono'
import {
  type PolicyCategory,
  type PolicyEnforcement,
  type PolicyExemplar,
  type PolicyRecord,
} from '../db/policies.js'
import { requireOwnerOrUnowned } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { isHttpUrl } from '../domain/names.js'
import { HttpError, intParam, readBody, reply, requireOrg, requirePrincipal, required } from './http.js'

const CATEGORIES: readonly PolicyCategory[] = ['regulation', 'standard']
const ENFORCEMENTS: readonly PolicyEnforcement[] = ['must', 'should', 'may']
/** A policy id: lowercase letters, digits and underscores (the document's rule), at most 128 characters. */
const POLICY_ID = /^[a-z0-9_]{1,128}$/
/** A calendar date or an ISO 8601 instant. */
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

/** The wire `Policy` (every member present; optional ones null). */
export const wirePolicy = (policy: PolicyRecord): Record<string, unknown> => {
  const { owner_org_id: _owner, ...wire } = policy
  return wire
}

/** The wire `PolicySummary`: the policy without its text, guidance, exemplars and extensions. */
const wireSummary = (policy: PolicyRecord): Record<string, unknown> => {
  const {
    policy: _text,
    guidance: _guidance,
    exemplars: _exemplars,
    ext: _ext,
    ...summary
  } = wirePolicy(policy)
  return summary
}

const enumParam = <T extends string>(value: string | undefined, name: string, allowed: readonly T[]) => {
  if (value === undefined || value === '') return undefined
  if (!allowed.includes(value as T)) {
    throw new HttpError(400, 'invalid_parameter', `${name} must be one of ${allowed.join(', ')}`, {
      details: { parameter: name, allowed },
    })
  }
  return value as T
}

const notFound = (policyId: string) =>
  new HttpError(404, 'policy_not_found', `no policy ${policyId} in the registry`, { policy_id: policyId })

/** The policy routes. */
export function policyRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { policies } = deps.repository

  app.get('/api/policies/registry', async (c) => {
    const query = {
      search: c.req.query('search')?.trim() || undefined,
      category: enumParam(c.req.query('category'), 'category', CATEGORIES),
      enforcement: enumParam(c.req.query('enforcement'), 'enforcement', ENFORCEMENTS),
      jurisdiction: c.req.query('jurisdiction')?.trim() || undefined,
      policyCategory: c.req.query('policy_category')?.trim() || undefined,
      governanceDomain: c.req.query('domain')?.trim() || undefined,
      limit: intParam(c.req.query('limit'), 'limit', 20, 1, 1000),
      offset: intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    }
    const { policies: found, stats } = await policies.list(query)
    return reply(c, deps, 'listPolicies', { policies: found.map(wireSummary), stats })
  })

  app.get('/api/policies/resolve', async (c) => {
    const policyId = required(c.req.query('policy_id'), 'policy_id')
    const version = c.req.query('version')
    const policy = await policies.get(policyId)
    if (!policy) throw notFound(policyId)
    // Pinned to another version: null, as the document says.
    if (version !== undefined && version !== '' && version !== policy.version)
      return reply(c, deps, 'resolvePolicy', null)
    return reply(c, deps, 'resolvePolicy', wirePolicy(policy))
  })

  app.post('/api/policies/resolve/bulk', async (c) => {
    const body = await readBody<{ policy_ids: string[] }>(c, 'resolvePoliciesBulk', 64 * 1024)
    const ids = [...new Set(body.policy_ids.map((id) => id.trim()))]
    const found = new Map((await policies.getMany(ids)).map((policy) => [policy.policy_id, policy]))
    const results: Record<string, unknown> = {}
    for (const id of ids) {
      const policy = found.get(id)
      results[id] = policy ? wirePolicy(policy) : null
    }
    return reply(c, deps, 'resolvePoliciesBulk', { results })
  })

  app.get('/api/policies/history', async (c) => {
    const policyId = required(c.req.query('policy_id'), 'policy_id')
    const limit = intParam(c.req.query('limit'), 'limit', 20, 1, 100)
    const offset = intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
    if (!(await policies.get(policyId))) throw notFound(policyId)
    const history = await policies.history(policyId, limit, offset)
    return reply(c, deps, 'getPolicyHistory', {
      policy_id: policyId,
      total: history.total,
      revisions: history.revisions.map((revision) => ({ ...revision, is_rollback: false })),
    })
  })

  app.post('/api/policies/save', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readBody<{
      policy_id: string
      version: string
      name: string
      category: PolicyCategory
      enforcement: PolicyEnforcement
      policy: string
      description?: string
      jurisdictions?: string[]
      region_aliases?: Record<string, string[]>
      policy_categories?: string[]
      channels?: string[]
      effective_date?: string
      sunset_date?: string
      governance_domains?: string[]
      source_url?: string
      source_name?: string
      guidance?: string
      exemplars?: { pass?: PolicyExemplar[]; fail?: PolicyExemplar[] }
      ext?: Record<string, unknown>
    }>(c, 'savePolicy', 256 * 1024)
    const orgId = requireOrg(principal)
    const invalid = (field: string, message: string) =>
      new HttpError(400, 'invalid_request', message, { details: { field } })
    if (!POLICY_ID.test(body.policy_id))
      throw invalid('policy_id', 'policy_id must be 1 to 128 lowercase letters, digits or underscores')
    for (const field of ['version', 'name', 'policy'] as const) {
      if (body[field].trim() === '') throw invalid(field, `${field} must not be empty`)
    }
    if (body.source_url !== undefined && !isHttpUrl(body.source_url))
      throw invalid('source_url', 'source_url must use http:// or https://')
    for (const field of ['effective_date', 'sunset_date'] as const) {
      const value = body[field]
      if (value !== undefined && (!DATE.test(value) || Number.isNaN(Date.parse(value))))
        throw invalid(field, `${field} must be an ISO 8601 date (YYYY-MM-DD)`)
    }
    const existing = await policies.get(body.policy_id)
    const conflict = (error: string, message: string) =>
      new HttpError(409, error, message, { policy_id: body.policy_id })
    if (existing?.source_type === 'registry')
      throw conflict(
        'policy_registry_sourced',
        `${body.policy_id} is curated by the registry and cannot be edited`,
      )
    if (existing?.review_status === 'pending')
      throw conflict('policy_pending_review', `${body.policy_id} is pending review and cannot be edited`)
    requireOwnerOrUnowned(orgId, existing?.owner_org_id ?? undefined, 'policy_not_owned', body.policy_id)
    const at = new Date(deps.now()).toISOString()
    const pick = <K extends keyof PolicyRecord>(
      key: K,
      sent: PolicyRecord[K] | undefined,
      fallback: PolicyRecord[K],
    ) => (sent !== undefined ? sent : existing ? existing[key] : fallback)
    const policy: PolicyRecord = {
      policy_id: body.policy_id,
      version: body.version.trim(),
      name: body.name.trim(),
      description: pick('description', body.description, null),
      category: body.category,
      enforcement: body.enforcement,
      jurisdictions: pick('jurisdictions', body.jurisdictions, []),
      region_aliases: pick('region_aliases', body.region_aliases, {}),
      policy_categories: pick('policy_categories', body.policy_categories, []),
      channels: pick('channels', body.channels, null),
      governance_domains: pick('governance_domains', body.governance_domains, []),
      effective_date: pick('effective_date', body.effective_date, null),
      sunset_date: pick('sunset_date', body.sunset_date, null),
      source_url: pick('source_url', body.source_url, null),
      source_name: pick('source_name', body.source_name, null),
      policy: body.policy,
      guidance: pick('guidance', body.guidance, null),
      exemplars: pick('exemplars', body.exemplars, null),
      ext: pick('ext', body.ext, null),
      source_type: 'community',
      review_status: 'approved',
      owner_org_id: orgId,
      created_at: existing?.created_at ?? at,
      // Strictly after the stored instant, so the guarded update below always changes the row.
      updated_at:
        existing && existing.updated_at >= at
          ? new Date(Date.parse(existing.updated_at) + 1).toISOString()
          : at,
    }
    const revision = await policies.put(
      policy,
      {
        editor_name: principal.orgName ?? orgId,
        edit_summary: existing
          ? `Updated ${policy.name} to version ${policy.version}`
          : `Created ${policy.name}`,
        source: 'community',
      },
      existing?.updated_at,
    )
    if (revision === undefined)
      throw conflict(
        'policy_changed',
        `${body.policy_id} changed while it was being saved; read it and retry`,
      )
    return reply(c, deps, 'savePolicy', {
      success: true,
      message: existing ? `Policy ${policy.policy_id} updated` : `Policy ${policy.policy_id} created`,
      policy_id: policy.policy_id,
      revision_number: revision,
    })
  })

  return app
}
