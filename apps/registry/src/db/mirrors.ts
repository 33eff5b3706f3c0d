/**
 * Community mirrors (catalog-only adagents.json documents for platforms that have not adopted AdCP), the
 * proposals contributors file for them, and the registry's moderators (organizations whose members review
 * proposals and publish mirrors). Publishing a mirror and approving a proposal are single transactions that
 * also refresh the mirror's derived property-catalog rows (see `catalog.ts`).
 */
import type { SqlDriver, SqlExecutor, SqlValue } from '@adwire/sql'
import { jsonText, parseJson } from './json.js'
import { retireMirrorEntries, syncMirrorEntries, type MirrorCatalogProperty } from './catalog.js'

export type ProposalStatus = 'pending' | 'approved' | 'rejected'

export interface MirrorRecord {
  platform: string
  document: Record<string, unknown>
  catalog_etag: string | null
  superseded_by: string | null
  /** SHA-256 of the mirror's canonical state; proposals are reviewed against it. */
  digest: string
  publisher_domains: string[]
  created_at: string
  updated_at: string
}

export interface ProposalRecord {
  id: string
  platform: string
  document: Record<string, unknown>
  catalog_etag: string | null
  superseded_by: string | null
  proposal_digest: string
  base_mirror_digest: string | null
  status: ProposalStatus
  proposed_by_org_id: string | null
  proposed_by_user_id: string | null
  proposed_at: string
  reviewed_at: string | null
  reviewed_by: string | null
  review_notes: string | null
  published_at: string | null
  created_at: string
  updated_at: string
}

export interface ProposalListQuery {
  /** Only this organization's proposals (a contributor); all organizations when absent (a moderator). */
  readonly orgId?: string
  readonly status?: ProposalStatus
  readonly limit: number
  readonly offset: number
}

/** Why a review did not apply. */
export type ReviewRefusal = 'not_found' | 'already_reviewed' | 'digest_mismatch' | 'base_mirror_stale'

export interface MirrorStore {
  isModerator(orgId: string): Promise<boolean>
  /** Makes an organization's members registry moderators (idempotent). */
  grantModerator(orgId: string, at: string): Promise<void>
  revokeModerator(orgId: string): Promise<void>
  getMirror(platform: string): Promise<MirrorRecord | undefined>
  listMirrors(limit: number, offset: number): Promise<{ mirrors: MirrorRecord[]; total: number }>
  /** Inserts or replaces a mirror and refreshes its catalog rows (one transaction). */
  putMirror(mirror: MirrorRecord, properties: readonly MirrorCatalogProperty[]): Promise<MirrorRecord>
  /** Deletes a mirror and retires its catalog rows; false when there was none. */
  deleteMirror(platform: string, at: string): Promise<boolean>
  getProposal(id: string): Promise<ProposalRecord | undefined>
  listProposals(query: ProposalListQuery): Promise<{ proposals: ProposalRecord[]; total: number }>
  /** The organization's pending proposal for a platform, if any (a new submission refreshes it). */
  pendingProposalOf(orgId: string, platform: string): Promise<ProposalRecord | undefined>
  /** Inserts a proposal, or refreshes the pending one with the same id. */
  putProposal(proposal: ProposalRecord): Promise<void>
  /**
   * Approves a pending proposal whose digest is `digest` and whose base is still the public mirror, and
   * publishes it, atomically.
   */
  approve(
    id: string,
    digest: string,
    review: { reviewed_by: string; review_notes: string | null; at: string },
    publish: (proposal: ProposalRecord) => {
      mirror: MirrorRecord
      properties: readonly MirrorCatalogProperty[]
    },
  ): Promise<{ proposal: ProposalRecord; mirror: MirrorRecord } | ReviewRefusal>
  /** Rejects a pending proposal whose digest is `digest`. */
  reject(
    id: string,
    digest: string,
    review: { reviewed_by: string; review_notes: string; at: string },
  ): Promise<ProposalRecord | ReviewRefusal>
}

type MirrorRow = Omit<MirrorRecord, 'document' | 'publisher_domains'> & {
  document: string
  publisher_domains: string
}
type ProposalRow = Omit<ProposalRecord, 'document'> & { document: string }

const MIRROR_COLUMNS =
  'platform, document, catalog_etag, superseded_by, digest, publisher_domains, created_at, updated_at'
const PROPOSAL_COLUMNS =
  'id, platform, document, catalog_etag, superseded_by, proposal_digest, base_mirror_digest, status, proposed_by_org_id, proposed_by_user_id, proposed_at, reviewed_at, reviewed_by, review_notes, published_at, created_at, updated_at'

const toMirror = (row: MirrorRow): MirrorRecord => ({
  ...row,
  document: parseJson<Record<string, unknown>>(row.document)!,
  publisher_domains: parseJson<string[]>(row.publisher_domains) ?? [],
})

const toProposal = (row: ProposalRow): ProposalRecord => ({
  ...row,
  document: parseJson<Record<string, unknown>>(row.document)!,
})

const proposalValues = (p: ProposalRecord): SqlValue[] => [
  p.id,
  p.platform,
  jsonText(p.document),
  p.catalog_etag,
  p.superseded_by,
  p.proposal_digest,
  p.base_mirror_digest,
  p.status,
  p.proposed_by_org_id,
  p.proposed_by_user_id,
  p.proposed_at,
  p.reviewed_at,
  p.reviewed_by,
  p.review_notes,
  p.published_at,
  p.created_at,
  p.updated_at,
]

async function writeMirror(
  tx: SqlExecutor,
  mirror: MirrorRecord,
  properties: readonly MirrorCatalogProperty[],
): Promise<MirrorRecord> {
  const existing = await tx.one<{ created_at: string }>(
    'SELECT created_at FROM registry_community_mirrors WHERE platform = ?',
    [mirror.platform],
  )
  const stored = { ...mirror, created_at: existing?.created_at ?? mirror.created_at }
  await tx.run(
    `INSERT INTO registry_community_mirrors (${MIRROR_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (platform) DO UPDATE SET document = excluded.document, catalog_etag = excluded.catalog_etag,
       superseded_by = excluded.superseded_by, digest = excluded.digest,
       publisher_domains = excluded.publisher_domains, updated_at = excluded.updated_at`,
    [
      stored.platform,
      jsonText(stored.document),
      stored.catalog_etag,
      stored.superseded_by,
      stored.digest,
      jsonText(stored.publisher_domains),
      stored.created_at,
      stored.updated_at,
    ],
  )
  await syncMirrorEntries(tx, stored.platform, properties, stored.updated_at)
  return stored
}

/** The mirror statements on `db`. */
export function mirrorStore(db: SqlDriver): MirrorStore {
  return {
    async isModerator(orgId) {
      return Boolean(await db.one('SELECT org_id FROM registry_moderators WHERE org_id = ?', [orgId]))
    },
    async grantModerator(orgId, at) {
      await db.run(
        'INSERT INTO registry_moderators (org_id, granted_at) VALUES (?, ?) ON CONFLICT (org_id) DO NOTHING',
        [orgId, at],
      )
    },
    async revokeModerator(orgId) {
      await db.run('DELETE FROM registry_moderators WHERE org_id = ?', [orgId])
    },
    async getMirror(platform) {
      const row = await db.one<MirrorRow>(
        `SELECT ${MIRROR_COLUMNS} FROM registry_community_mirrors WHERE platform = ?`,
        [platform],
      )
      return row && toMirror(row)
    },
    async listMirrors(limit, offset) {
      const rows = await db.all<MirrorRow>(
        `SELECT ${MIRROR_COLUMNS} FROM registry_community_mirrors ORDER BY platform LIMIT ? OFFSET ?`,
        [limit, offset],
      )
      const count = await db.one<{ n: number }>(
        'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_community_mirrors',
      )
      return { mirrors: rows.map(toMirror), total: Number(count?.n ?? 0) }
    },
    putMirror(mirror, properties) {
      return db.transaction((tx) => writeMirror(tx, mirror, properties))
    },
    deleteMirror(platform, at) {
      return db.transaction(async (tx) => {
        const deleted = await tx.run('DELETE FROM registry_community_mirrors WHERE platform = ?', [platform])
        if (deleted === 0) return false
        await retireMirrorEntries(tx, platform, at)
        return true
      })
    },
    async getProposal(id) {
      const row = await db.one<ProposalRow>(
        `SELECT ${PROPOSAL_COLUMNS} FROM registry_mirror_proposals WHERE id = ?`,
        [id],
      )
      return row && toProposal(row)
    },
    async listProposals({ orgId, status, limit, offset }) {
      const where: string[] = []
      const params: SqlValue[] = []
      if (orgId !== undefined) {
        where.push('proposed_by_org_id = ?')
        params.push(orgId)
      }
      if (status) {
        where.push('status = ?')
        params.push(status)
      }
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
      const rows = await db.all<ProposalRow>(
        `SELECT ${PROPOSAL_COLUMNS} FROM registry_mirror_proposals ${clause}
         ORDER BY proposed_at DESC, id LIMIT ? OFFSET ?`,
        [...params, limit, offset],
      )
      const count = await db.one<{ n: number }>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_mirror_proposals ${clause}`,
        params,
      )
      return { proposals: rows.map(toProposal), total: Number(count?.n ?? 0) }
    },
    async pendingProposalOf(orgId, platform) {
      const row = await db.one<ProposalRow>(
        `SELECT ${PROPOSAL_COLUMNS} FROM registry_mirror_proposals
         WHERE proposed_by_org_id = ? AND platform = ? AND status = 'pending' ORDER BY proposed_at DESC`,
        [orgId, platform],
      )
      return row && toProposal(row)
    },
    async putProposal(proposal) {
      await db.run(
        `INSERT INTO registry_mirror_proposals (${PROPOSAL_COLUMNS})
         VALUES (${PROPOSAL_COLUMNS.split(', ')
           .map(() => '?')
           .join(', ')})
         ON CONFLICT (id) DO UPDATE SET document = excluded.document, catalog_etag = excluded.catalog_etag,
           superseded_by = excluded.superseded_by, proposal_digest = excluded.proposal_digest,
           base_mirror_digest = excluded.base_mirror_digest, proposed_by_user_id = excluded.proposed_by_user_id,
           proposed_at = excluded.proposed_at, updated_at = excluded.updated_at`,
        proposalValues(proposal),
      )
    },
    approve(id, digest, review, publish) {
      return db
        .transaction(async (tx) => {
          const row = await tx.one<ProposalRow>(
            `SELECT ${PROPOSAL_COLUMNS} FROM registry_mirror_proposals WHERE id = ?`,
            [id],
          )
          if (!row) return 'not_found' as const
          const proposal = toProposal(row)
          if (proposal.status !== 'pending') return 'already_reviewed' as const
          if (proposal.proposal_digest !== digest) return 'digest_mismatch' as const
          // Claim the proposal before reading the mirror: on PostgreSQL a concurrent approval holds this
          // row until it commits, so the loser sees the review (not the mirror the winner just published).
          const changed = await tx.run(
            `UPDATE registry_mirror_proposals SET status = 'approved', reviewed_at = ?, reviewed_by = ?,
             review_notes = ?, published_at = ?, updated_at = ?
           WHERE id = ? AND status = 'pending' AND proposal_digest = ?`,
            [review.at, review.reviewed_by, review.review_notes, review.at, review.at, id, digest],
          )
          // A concurrent refresh or review got there first.
          if (changed === 0) throw new StaleReview()
          const current = await tx.one<{ digest: string }>(
            'SELECT digest FROM registry_community_mirrors WHERE platform = ?',
            [proposal.platform],
          )
          // The mirror moved since the proposal was made: undo the claim (the transaction rolls back).
          if ((current?.digest ?? null) !== proposal.base_mirror_digest) throw new BaseMirrorStale()
          const { mirror, properties } = publish(proposal)
          const stored = await writeMirror(tx, mirror, properties)
          return {
            proposal: {
              ...proposal,
              status: 'approved' as const,
              reviewed_at: review.at,
              reviewed_by: review.reviewed_by,
              review_notes: review.review_notes,
              published_at: review.at,
              updated_at: review.at,
            },
            mirror: stored,
          }
        })
        .catch(async (error: unknown) => {
          if (error instanceof BaseMirrorStale) return 'base_mirror_stale' as const
          if (!(error instanceof StaleReview)) throw error
          // Another review or a refresh committed between our read and our update: say which.
          return (await statusOf(db, id)) === 'pending'
            ? ('digest_mismatch' as const)
            : ('already_reviewed' as const)
        })
    },
    reject(id, digest, review) {
      return db.transaction(async (tx) => {
        const row = await tx.one<ProposalRow>(
          `SELECT ${PROPOSAL_COLUMNS} FROM registry_mirror_proposals WHERE id = ?`,
          [id],
        )
        if (!row) return 'not_found' as const
        const proposal = toProposal(row)
        if (proposal.status !== 'pending') return 'already_reviewed' as const
        if (proposal.proposal_digest !== digest) return 'digest_mismatch' as const
        const changed = await tx.run(
          `UPDATE registry_mirror_proposals SET status = 'rejected', reviewed_at = ?, reviewed_by = ?,
             review_notes = ?, updated_at = ?
           WHERE id = ? AND status = 'pending' AND proposal_digest = ?`,
          [review.at, review.reviewed_by, review.review_notes, review.at, id, digest],
        )
        if (changed === 0) {
          return (await statusOf(tx, id)) === 'pending'
            ? ('digest_mismatch' as const)
            : ('already_reviewed' as const)
        }
        return {
          ...proposal,
          status: 'rejected' as const,
          reviewed_at: review.at,
          reviewed_by: review.reviewed_by,
          review_notes: review.review_notes,
          updated_at: review.at,
        }
      })
    },
  }
}

const statusOf = async (db: SqlExecutor, id: string): Promise<string | undefined> =>
  (await db.one<{ status: string }>('SELECT status FROM registry_mirror_proposals WHERE id = ?', [id]))
    ?.status

class StaleReview extends Error {
  override readonly name = 'StaleReview'
}

class BaseMirrorStale extends Error {
  override readonly name = 'BaseMirrorStale'
}
