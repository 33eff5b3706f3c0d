/**
 * Community Mirrors: catalog-only adagents.json documents the registry hosts for platforms that have not
 * adopted AdCP (`/api/registry/mirrors/{platform}`), and the proposals through which contributors change them
 * (`/api/registry/mirror-proposals`).
 *
 * Who may do what. The auth module knows organizations (API keys, and users signed in as members of one), not
 * roles; a registry moderator is therefore a member of a moderator organization, listed in
 * `registry_moderators` (`repository.mirrors.grantModerator(orgId)`). Moderators publish and delete mirrors
 * and review proposals; any other organization is a contributor: its `PUT` becomes a pending proposal (202),
 * and it sees only its own proposals.
 *
 * Review is bound to a digest: every proposal revision has a SHA-256 `proposal_digest` over its platform,
 * document and the digest of the public mirror it was made against (`base_mirror_digest`). Approve and reject
 * must echo the digest; when the contributor refreshed the proposal since (new digest), or the public mirror
 * changed since it was proposed, the review is refused with 409 and nothing is published.
 *
 * Every stored document is catalog-only: `authorized_agents` is forced to `[]` (a mirror never asserts a sales
 * authorization), `$schema` and `last_updated` are regenerated, and the assembled document must pass the
 * official adagents.json schema.
 */
import { createHash, randomUUID } from 'node:crypto'
import { Hono, type Context } from 'hono'
import type { MirrorCatalogProperty } from '../db/catalog.js'
import type { MirrorRecord, ProposalRecord, ProposalStatus } from '../db/mirrors.js'
import { isModerator as isModeratorOf, requireModerator as requireModeratorOf } from '../auth/authorize.js'
import type { Principal, RegistryDeps } from '../deps.js'
import { ADAGENTS_SCHEMA } from '../domain/hosted.js'
import { normalizeDomain } from '../domain/names.js'
import { adagentsSchemaErrors } from '../spec/adagents-schema.js'
import {
  boolParam,
  HttpError,
  intParam,
  readBody,
  reply,
  requireOrg,
  requirePrincipal,
  uuidParam,
} from './http.js'

/** The largest contributor proposal, bytes, and its most catalog items (the document's limits). */
export const CONTRIBUTOR_MAX_BYTES = 1024 * 1024
export const CONTRIBUTOR_MAX_ITEMS = 2000
/** The largest mirror a moderator may publish directly, bytes. */
export const MODERATOR_MAX_BYTES = 8 * 1024 * 1024

const PLATFORM = /^[a-z0-9_-]{1,64}$/
const CATALOG_ARRAYS = ['formats', 'properties', 'placements', 'collections', 'signals'] as const

const platformParam = (value: string | undefined): string => {
  const platform = (value ?? '').trim().toLowerCase()
  if (!PLATFORM.test(platform)) {
    throw new HttpError(400, 'invalid_platform', 'platform must be 1 to 64 of a-z, 0-9, _ and -', {
      details: [{ parameter: 'platform' }],
    })
  }
  return platform
}

/** A proposal id (`format: uuid`); the 400 carries `details` as an array, as the review errors' schema says. */
const proposalId = (value: string | undefined): string => {
  try {
    return uuidParam(value, 'id')
  } catch (error) {
    if (error instanceof HttpError)
      throw new HttpError(400, error.code, error.message, { details: [{ parameter: 'id' }] })
    throw error
  }
}

/** JSON with object keys sorted, so equal documents hash equally. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

const sha256 = (value: unknown): string => createHash('sha256').update(canonical(value)).digest('hex')

/** The digest of a public mirror's state. */
export const mirrorDigest = (platform: string, document: Record<string, unknown>): string =>
  sha256({ kind: 'mirror', platform, document })

/** The digest reviewers echo: this proposal revision's content and the mirror state it was made against. */
export const proposalDigest = (
  platform: string,
  document: Record<string, unknown>,
  baseMirrorDigest: string | null,
): string => sha256({ kind: 'proposal', platform, document, base_mirror_digest: baseMirrorDigest })

/**
 * The body of a mirror operation: as `readBody`, but a refusal's `details` is an array (the document's
 * `CommunityMirrorPublishError`).
 */
async function readMirrorBody<T>(c: Context, operationId: string, maxBytes: number): Promise<T> {
  try {
    return await readBody<T>(c, operationId, maxBytes)
  } catch (error) {
    if (error instanceof HttpError && error.status === 400) {
      const { details, ...extra } = error.extra
      throw new HttpError(400, error.code, error.message, {
        ...extra,
        details: details === undefined ? [{ message: error.message }] : [details],
      })
    }
    throw error
  }
}

/** The catalog-only adagents.json stored for a submission. */
function assemble(body: Record<string, unknown>, at: string): Record<string, unknown> {
  const { $schema: _schema, last_updated: _updated, authorized_agents: _agents, ...catalog } = body
  return { $schema: ADAGENTS_SCHEMA, ...catalog, authorized_agents: [], last_updated: at }
}

/** 400 with the schema's findings when the assembled document is not a valid adagents.json. */
function assertConforms(document: Record<string, unknown>): void {
  const errors = adagentsSchemaErrors(document)
  if (errors.length === 0) return
  throw new HttpError(
    400,
    'adagents_schema_invalid',
    'the assembled adagents.json does not conform to the adagents.json schema',
    {
      details: errors.slice(0, 50).map((error) => ({
        path: error.instancePath || '/',
        message: error.message ?? 'is invalid',
        keyword: error.keyword,
      })),
    },
  )
}

const catalogItemCount = (body: Record<string, unknown>): number =>
  CATALOG_ARRAYS.reduce(
    (sum, key) => sum + (Array.isArray(body[key]) ? (body[key] as unknown[]).length : 0),
    0,
  )

/** The catalog rows a mirror's properties derive, and the publisher domains they name. */
function catalogOf(document: Record<string, unknown>): {
  properties: MirrorCatalogProperty[]
  publisherDomains: string[]
} {
  const properties: MirrorCatalogProperty[] = []
  const domains = new Set<string>()
  for (const item of (document.properties as Array<Record<string, unknown>> | undefined) ?? []) {
    const identifiers = ((item.identifiers as Array<{ type: string; value: string }> | undefined) ?? []).map(
      (identifier) => ({
        type: identifier.type,
        value:
          identifier.type === 'domain' || identifier.type === 'subdomain'
            ? (normalizeDomain(identifier.value) ?? identifier.value.trim().toLowerCase())
            : identifier.value.trim(),
      }),
    )
    const publisher = normalizeDomain(item.publisher_domain)
    if (publisher) domains.add(publisher)
    else {
      for (const identifier of identifiers) {
        if (identifier.type === 'domain' && normalizeDomain(identifier.value)) domains.add(identifier.value)
      }
    }
    properties.push({
      property_id: typeof item.property_id === 'string' ? item.property_id : null,
      identifiers,
    })
  }
  return { properties, publisherDomains: [...domains].sort() }
}

/** A mirror record for `document` (published at `at`). */
function mirrorOf(platform: string, document: Record<string, unknown>, at: string) {
  const { properties, publisherDomains } = catalogOf(document)
  const mirror: MirrorRecord = {
    platform,
    document,
    catalog_etag: typeof document.catalog_etag === 'string' ? document.catalog_etag : null,
    superseded_by: typeof document.superseded_by === 'string' ? document.superseded_by : null,
    digest: mirrorDigest(platform, document),
    publisher_domains: publisherDomains,
    created_at: at,
    updated_at: at,
  }
  return { mirror, properties }
}

const publishResponse = (mirror: MirrorRecord) => ({
  success: true,
  platform: mirror.platform,
  catalog_etag: mirror.catalog_etag,
  superseded_by: mirror.superseded_by,
  publisher_domains: mirror.publisher_domains,
  updated_at: mirror.updated_at,
})

const wireProposal = (proposal: ProposalRecord, moderator: boolean) => ({
  id: proposal.id,
  platform: proposal.platform,
  adagents_json: proposal.document,
  catalog_etag: proposal.catalog_etag,
  superseded_by: proposal.superseded_by,
  proposal_digest: proposal.proposal_digest,
  base_mirror_digest: proposal.base_mirror_digest,
  status: proposal.status,
  proposed_by_organization_id: proposal.proposed_by_org_id,
  // Contributor emails are for moderators only; the auth module's principals carry no email, so none is known.
  ...(moderator ? { proposed_by_email: null } : {}),
  proposed_at: proposal.proposed_at,
  reviewed_at: proposal.reviewed_at,
  review_notes: proposal.review_notes,
  published_at: proposal.published_at,
  created_at: proposal.created_at,
  updated_at: proposal.updated_at,
})

const wireProposalSummary = (proposal: ProposalRecord) => ({
  id: proposal.id,
  platform: proposal.platform,
  catalog_etag: proposal.catalog_etag,
  superseded_by: proposal.superseded_by,
  proposal_digest: proposal.proposal_digest,
  base_mirror_digest: proposal.base_mirror_digest,
  status: proposal.status,
  proposed_at: proposal.proposed_at,
  reviewed_at: proposal.reviewed_at,
  published_at: proposal.published_at,
  updated_at: proposal.updated_at,
})

const orgOf = (principal: Principal): string | undefined =>
  principal.orgId ?? (principal.kind === 'org' ? principal.id : undefined)

/** The mirror and proposal routes. */
export function mirrorRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { mirrors } = deps.repository
  const isModerator = (principal: Principal) => isModeratorOf(deps, principal)
  const requireModerator = (principal: Principal) => requireModeratorOf(deps, principal)
  const reviewer = (principal: Principal) => `${principal.kind}:${principal.id}`

  app.get('/api/registry/mirror-proposals', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const statusValue = c.req.query('status')
    if (statusValue !== undefined && !['pending', 'approved', 'rejected'].includes(statusValue)) {
      throw new HttpError(400, 'invalid_status', 'status must be pending, approved or rejected', {
        details: { parameter: 'status' },
      })
    }
    const reviewQueue = c.req.query('review_queue')
    if (reviewQueue !== undefined && reviewQueue !== 'true' && reviewQueue !== 'false') {
      throw new HttpError(400, 'invalid_parameter', 'review_queue must be true or false', {
        details: { parameter: 'review_queue' },
      })
    }
    const limit = intParam(c.req.query('limit'), 'limit', 20, 1, 50)
    const offset = intParam(c.req.query('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
    const moderator = await isModerator(principal)
    if (reviewQueue === 'true' && !moderator) {
      throw new HttpError(403, 'moderator_required', 'the review queue is for registry moderators')
    }
    const status = statusValue as ProposalStatus | undefined
    const { proposals, total } = moderator
      ? await mirrors.listProposals({ status: status ?? 'pending', limit, offset })
      : await mirrors.listProposals({
          orgId: requireOrg(principal),
          ...(status ? { status } : {}),
          limit,
          offset,
        })
    return reply(c, deps, 'listCommunityMirrorProposals', {
      proposals: proposals.map(wireProposalSummary),
      total,
    })
  })

  app.get('/api/registry/mirror-proposals/:id', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const id = uuidParam(c.req.param('id'), 'id')
    const proposal = await mirrors.getProposal(id)
    const moderator = await isModerator(principal)
    if (!proposal || (!moderator && proposal.proposed_by_org_id !== orgOf(principal))) {
      throw new HttpError(404, 'proposal_not_found', `no proposal ${id} visible to you`)
    }
    return reply(c, deps, 'getCommunityMirrorProposal', { proposal: wireProposal(proposal, moderator) })
  })

  const refusal = (
    reason: 'not_found' | 'already_reviewed' | 'digest_mismatch' | 'base_mirror_stale',
    id: string,
  ) => {
    switch (reason) {
      case 'not_found':
        return new HttpError(404, 'proposal_not_found', `no proposal ${id}`)
      case 'already_reviewed':
        return new HttpError(409, 'proposal_already_reviewed', `proposal ${id} was already reviewed`)
      case 'digest_mismatch':
        return new HttpError(
          409,
          'proposal_digest_mismatch',
          `proposal ${id} changed since you reviewed it; fetch it again and review the current revision`,
        )
      case 'base_mirror_stale':
        return new HttpError(
          409,
          'base_mirror_stale',
          `the public mirror changed since proposal ${id} was made; the contributor must resubmit it`,
        )
    }
  }

  app.post('/api/registry/mirror-proposals/:id/approve', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readMirrorBody<{ proposal_digest: string; review_notes?: string }>(
      c,
      'approveCommunityMirrorProposal',
      64 * 1024,
    )
    const id = proposalId(c.req.param('id'))
    await requireModerator(principal)
    const proposal = await mirrors.getProposal(id)
    if (!proposal) throw refusal('not_found', id)
    const at = new Date(deps.now()).toISOString()
    let published: ReturnType<typeof mirrorOf> | undefined
    const result = await mirrors.approve(
      id,
      body.proposal_digest,
      { reviewed_by: reviewer(principal), review_notes: body.review_notes ?? null, at },
      (pending) => {
        const document = { ...pending.document, last_updated: at }
        // The schema may have moved since the proposal was made: publish only what conforms now.
        assertConforms(document)
        published = mirrorOf(pending.platform, document, at)
        return published
      },
    )
    if (typeof result === 'string') throw refusal(result, id)
    return reply(c, deps, 'approveCommunityMirrorProposal', {
      ...publishResponse(result.mirror),
      proposal_id: result.proposal.id,
    })
  })

  app.post('/api/registry/mirror-proposals/:id/reject', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const body = await readMirrorBody<{ proposal_digest: string; review_notes: string }>(
      c,
      'rejectCommunityMirrorProposal',
      64 * 1024,
    )
    const id = proposalId(c.req.param('id'))
    await requireModerator(principal)
    if (body.review_notes.trim() === '') {
      throw new HttpError(400, 'invalid_request', 'review_notes must say why the proposal is rejected', {
        details: [{ field: 'review_notes' }],
      })
    }
    const result = await mirrors.reject(id, body.proposal_digest, {
      reviewed_by: reviewer(principal),
      review_notes: body.review_notes.trim(),
      at: new Date(deps.now()).toISOString(),
    })
    if (typeof result === 'string') throw refusal(result, id)
    return reply(c, deps, 'rejectCommunityMirrorProposal', {
      success: true,
      proposal: wireProposal(result, true),
    })
  })

  app.get('/api/registry/mirrors', async (c) => {
    // The document clamps these (limit to 1–500, offset to ≥ 0); a value that is not a whole number is a 400.
    const whole = (name: string, fallback: number): number => {
      const value = c.req.query(name)
      if (value === undefined || value === '') return fallback
      if (!/^-?[0-9]{1,16}$/.test(value)) {
        throw new HttpError(400, 'invalid_parameter', `${name} must be a whole number`, {
          details: { parameter: name },
        })
      }
      return Number(value)
    }
    const limit = Math.min(500, Math.max(1, whole('limit', 100)))
    const offset = Math.max(0, whole('offset', 0))
    const { mirrors: found, total } = await mirrors.listMirrors(limit, offset)
    return reply(c, deps, 'listCommunityMirrors', {
      mirrors: found.map((mirror) => ({
        platform: mirror.platform,
        catalog_etag: mirror.catalog_etag,
        superseded_by: mirror.superseded_by,
        updated_at: mirror.updated_at,
      })),
      total,
    })
  })

  app.get('/api/registry/mirrors/:platform', async (c) => {
    const platform = platformParam(c.req.param('platform'))
    const mirror = await mirrors.getMirror(platform)
    if (!mirror) throw new HttpError(404, 'mirror_not_found', `no community mirror for ${platform}`)
    return reply(c, deps, 'getCommunityMirror', {
      platform: mirror.platform,
      catalog_etag: mirror.catalog_etag,
      superseded_by: mirror.superseded_by,
      adagents_json: mirror.document,
      created_at: mirror.created_at,
      updated_at: mirror.updated_at,
    })
  })

  app.put('/api/registry/mirrors/:platform', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const moderator = await isModerator(principal)
    const body = await readMirrorBody<Record<string, unknown>>(
      c,
      'publishCommunityMirror',
      moderator ? MODERATOR_MAX_BYTES : CONTRIBUTOR_MAX_BYTES,
    )
    const platform = platformParam(c.req.param('platform'))
    const orgId = moderator ? orgOf(principal) : requireOrg(principal)
    if (!moderator && catalogItemCount(body) > CONTRIBUTOR_MAX_ITEMS) {
      throw new HttpError(
        413,
        'too_many_catalog_items',
        `a contributor proposal holds at most ${CONTRIBUTOR_MAX_ITEMS} catalog items`,
        { details: { maximum: CONTRIBUTOR_MAX_ITEMS } },
      )
    }
    const at = new Date(deps.now()).toISOString()
    const document = assemble(body, at)
    assertConforms(document)
    if (moderator) {
      const { mirror, properties } = mirrorOf(platform, document, at)
      const stored = await mirrors.putMirror(mirror, properties)
      return reply(c, deps, 'publishCommunityMirror', publishResponse(stored))
    }
    const base = (await mirrors.getMirror(platform))?.digest ?? null
    const existing = await mirrors.pendingProposalOf(orgId!, platform)
    const proposal: ProposalRecord = {
      id: existing?.id ?? randomUUID(),
      platform,
      document,
      catalog_etag: typeof document.catalog_etag === 'string' ? document.catalog_etag : null,
      superseded_by: typeof document.superseded_by === 'string' ? document.superseded_by : null,
      proposal_digest: proposalDigest(platform, document, base),
      base_mirror_digest: base,
      status: 'pending',
      proposed_by_org_id: orgId ?? null,
      proposed_by_user_id: principal.kind === 'user' ? principal.id : null,
      proposed_at: at,
      reviewed_at: null,
      reviewed_by: null,
      review_notes: null,
      published_at: null,
      created_at: existing?.created_at ?? at,
      updated_at: at,
    }
    await mirrors.putProposal(proposal)
    return reply(
      c,
      deps,
      'publishCommunityMirror',
      {
        success: true,
        status: 'pending',
        proposal_id: proposal.id,
        proposal_digest: proposal.proposal_digest,
        platform,
        status_url: `/api/registry/mirror-proposals/${proposal.id}`,
        submitted_at: at,
      },
      202,
    )
  })

  app.delete('/api/registry/mirrors/:platform', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const platform = platformParam(c.req.param('platform'))
    const force = boolParam(c.req.query('force'), 'force')
    const mirror = await mirrors.getMirror(platform)
    if (!mirror) throw new HttpError(404, 'mirror_not_found', `no community mirror for ${platform}`)
    await requireModerator(principal)
    if (!mirror.superseded_by && !force) {
      throw new HttpError(
        409,
        'mirror_not_superseded',
        `publish a superseded_by URL for ${platform} first so buyers can migrate, or delete with force=true`,
      )
    }
    await mirrors.deleteMirror(platform, new Date(deps.now()).toISOString())
    return reply(c, deps, 'deleteCommunityMirror', { success: true, platform })
  })

  return app
}
