/**
 * The property catalog: a fact graph of identifiers linked to stable property handles (`property_rid`).
 *
 * Two kinds of facts make it up, read together as one catalog:
 * - the properties publishers declare in their own adagents.json (`registry_properties`, source
 *   `adagents_json` / `hosted` / …: the strongest links, never suspended by a dispute), and
 * - contributed entries (`registry_catalog_entries`) with their identifier links (`registry_catalog_links`):
 *   created by `POST /api/registry/resolve` with the caller's provenance, or derived from a community mirror.
 *
 * Every contributed link carries a strength from its provenance (a publisher declaration is strong; SSP,
 * deal, impression and data-partner facts are medium; allowlists and member assertions are weak). A dispute
 * suspends a medium or weak link at once; stronger claims queue for review. Resolves in `resolve` mode log
 * one activity row per property handle and call (`registry_catalog_activity`), which browse filters read.
 */
import { uuidv7 } from '../domain/ids.js'
import { placeholders, type SqlDriver, type SqlExecutor, type SqlValue } from '@adwire/sql'
import { containsPattern } from './json.js'

export type ProvenanceType =
  | 'agency_allowlist'
  | 'publisher_declaration'
  | 'impression_log'
  | 'ssp_inventory'
  | 'deal_history'
  | 'crawl'
  | 'data_partner'
  | 'member_assertion'

export type LinkStrength = 'strong' | 'medium' | 'weak'

/** The strength a contributed link gets from its provenance. */
export const STRENGTH_OF: Record<ProvenanceType | 'community_mirror', LinkStrength> = {
  publisher_declaration: 'strong',
  crawl: 'strong',
  ssp_inventory: 'medium',
  deal_history: 'medium',
  impression_log: 'medium',
  data_partner: 'medium',
  community_mirror: 'medium',
  agency_allowlist: 'weak',
  member_assertion: 'weak',
}

export interface CatalogIdentifier {
  type: string
  value: string
}

export interface CatalogEntry {
  property_rid: string
  property_id: string | null
  classification: string
  source: string
  status: string
  adagents_url: string | null
  created_by: string | null
  created_at: string
  updated_at: string
  source_updated_at: string
}

export interface ResolvedIdentifier {
  identifier: CatalogIdentifier
  property_rid: string | null
  classification: string
  status: 'existing' | 'created' | 'excluded'
  source: string | null
  /** Not found in `lookup` mode (listed with a null handle, counted in `summary.not_found`). */
  not_found?: boolean
}

/** An identifier the caller sent, already normalized, or the reason it is excluded from the catalog. */
export interface ResolveInput {
  readonly identifier: CatalogIdentifier
  readonly excluded?: string
}

export interface BrowseQuery {
  readonly classification?: string
  readonly source?: string
  readonly status?: string
  readonly identifierType?: string
  readonly search?: string
  readonly minResolves?: number
  readonly activeSince?: string
  readonly after?: string
  readonly limit: number
}

export interface DisputeRecord {
  id: string
  dispute_type: 'identifier_link' | 'classification' | 'property_data' | 'false_merge'
  subject_type: string
  subject_value: string
  claim: string
  evidence: string | null
  status: 'suspended' | 'pending_review' | 'escalated'
  action_taken: 'link_suspended' | 'queued_for_review' | 'escalated'
  reason: string
  filed_by_org_id: string | null
  created_at: string
  updated_at: string
}

/** A property of a community mirror, as its catalog rows are derived from it. */
export interface MirrorCatalogProperty {
  readonly property_id: string | null
  readonly identifiers: readonly CatalogIdentifier[]
}

export interface CatalogStore {
  /**
   * Resolves identifiers to property handles. `resolve` mode creates the missing entries (with the caller's
   * provenance) and logs activity, in one transaction; `lookup` mode only reads.
   */
  resolve(
    inputs: readonly ResolveInput[],
    options: {
      mode: 'resolve' | 'lookup'
      provenance: { type: ProvenanceType; context?: string }
      orgId?: string
      at: string
    },
  ): Promise<ResolvedIdentifier[]>
  browse(query: BrowseQuery): Promise<{
    entries: Array<CatalogEntry & { identifiers: CatalogIdentifier[] }>
    total: number
    hasMore: boolean
  }>
  /** Entries changed after `since`, oldest change first; see `routes/catalog.ts` for the watermark. */
  changedSince(since: string, limit: number): Promise<{ entries: CatalogEntry[]; hasMore: boolean }>
  /** Entries whose last change is exactly `at` (a sync page that one instant fills). */
  changedAt(at: string, limit: number): Promise<{ entries: CatalogEntry[] }>
  /** Files and triages a dispute in one transaction; `unknown_subject` when nothing matches it. */
  fileDispute(
    dispute: Omit<DisputeRecord, 'status' | 'action_taken' | 'reason'>,
  ): Promise<DisputeRecord | 'unknown_subject'>
  getDispute(id: string): Promise<DisputeRecord | undefined>
}

/** Every catalog entry: the contributed ones and the properties publishers declare. */
const CATALOG = `(
  SELECT e.property_rid, e.property_id, e.classification, e.source, e.status, e.adagents_url, e.created_by,
    e.created_at, e.updated_at, e.source_updated_at
  FROM registry_catalog_entries e
  UNION ALL
  SELECT p.rid, p.property_id, 'property', p.source, 'active',
    'https://' || p.publisher_domain || '/.well-known/adagents.json', NULL, p.created_at, p.updated_at, p.updated_at
  FROM registry_properties p)`

/** Every live identifier link of the catalog. */
const LINKS = `(
  SELECT l.property_rid AS rid, l.identifier_type AS type, l.identifier_value AS value
  FROM registry_catalog_links l WHERE l.status = 'active'
  UNION ALL
  SELECT p.rid, i.identifier_type, i.identifier_value
  FROM registry_property_identifiers i
  JOIN registry_properties p ON p.publisher_domain = i.publisher_domain AND p.property_id = i.property_id)`

const ENTRY_COLUMNS =
  'property_rid, property_id, classification, source, status, adagents_url, created_by, created_at, updated_at, source_updated_at'

const DISPUTE_COLUMNS =
  'id, dispute_type, subject_type, subject_value, claim, evidence, status, action_taken, reason, filed_by_org_id, created_at, updated_at'

const CHUNK = 400

const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = []
  for (let index = 0; index < items.length; index += size) out.push(items.slice(index, index + size))
  return out
}

const keyOf = (identifier: CatalogIdentifier): string => `${identifier.type}\u0000${identifier.value}`

interface KnownLink {
  rid: string | null
  source: string
  classification: string
  suspended: boolean
}

/** The links the catalog already holds for `identifiers` (declared ones win over contributed ones). */
async function knownLinks(
  db: SqlExecutor,
  identifiers: readonly CatalogIdentifier[],
): Promise<Map<string, KnownLink>> {
  const known = new Map<string, KnownLink>()
  const values = [...new Set(identifiers.map((identifier) => identifier.value))]
  for (const part of chunks(values)) {
    const contributed = await db.all<{
      identifier_type: string
      identifier_value: string
      property_rid: string
      status: string
      source: string
      classification: string
    }>(
      `SELECT l.identifier_type, l.identifier_value, l.property_rid, l.status, e.source, e.classification
       FROM registry_catalog_links l JOIN registry_catalog_entries e ON e.property_rid = l.property_rid
       WHERE l.identifier_value IN (${placeholders(part.length)})`,
      part,
    )
    for (const row of contributed) {
      known.set(keyOf({ type: row.identifier_type, value: row.identifier_value }), {
        rid: row.status === 'active' ? row.property_rid : null,
        source: row.source,
        classification: row.classification,
        suspended: row.status !== 'active',
      })
    }
    const declared = await db.all<{
      identifier_type: string
      identifier_value: string
      rid: string
      source: string
    }>(
      `SELECT i.identifier_type, i.identifier_value, p.rid, p.source
       FROM registry_property_identifiers i
       JOIN registry_properties p ON p.publisher_domain = i.publisher_domain AND p.property_id = i.property_id
       WHERE i.identifier_value IN (${placeholders(part.length)})
       ORDER BY CASE WHEN i.publisher_domain = i.identifier_value THEN 0 ELSE 1 END DESC, i.publisher_domain DESC,
         i.property_id DESC`,
      part,
    )
    // Read in reverse preference order, so the preferred declaration (the publisher's own domain, then the
    // first publisher and property id) is the one that stays in the map.
    for (const row of declared) {
      known.set(keyOf({ type: row.identifier_type, value: row.identifier_value }), {
        rid: row.rid,
        source: row.source,
        classification: 'property',
        suspended: false,
      })
    }
  }
  return known
}

const insertRows = async (
  tx: SqlExecutor,
  table: string,
  columns: readonly string[],
  rows: readonly SqlValue[][],
  conflict = '',
): Promise<void> => {
  for (const part of chunks(rows, Math.floor(900 / columns.length))) {
    await tx.run(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${part
        .map(() => `(${placeholders(columns.length)})`)
        .join(', ')} ${conflict}`,
      part.flat(),
    )
  }
}

const ENTRY_INSERT_COLUMNS = [...ENTRY_COLUMNS.split(', '), 'origin']
const LINK_COLUMNS = [
  'identifier_type',
  'identifier_value',
  'property_rid',
  'strength',
  'status',
  'provenance_type',
  'provenance_context',
  'created_by',
  'created_at',
  'updated_at',
]

/**
 * Refreshes the catalog rows derived from a community mirror inside `tx`: each mirror property keeps (or
 * gets) an entry whose identifiers link to it; entries of this mirror no longer in it are retired.
 */
export async function syncMirrorEntries(
  tx: SqlExecutor,
  platform: string,
  properties: readonly MirrorCatalogProperty[],
  at: string,
): Promise<void> {
  const origin = `mirror:${platform}`
  const owned = new Map(
    (
      await tx.all<{ identifier_type: string; identifier_value: string; property_rid: string }>(
        `SELECT l.identifier_type, l.identifier_value, l.property_rid FROM registry_catalog_links l
         JOIN registry_catalog_entries e ON e.property_rid = l.property_rid WHERE e.origin = ?`,
        [origin],
      )
    ).map((row) => [keyOf({ type: row.identifier_type, value: row.identifier_value }), row.property_rid]),
  )
  const kept = new Set<string>()
  for (const property of properties) {
    const identifiers = property.identifiers
    const existingRid = identifiers.map((identifier) => owned.get(keyOf(identifier))).find(Boolean)
    const known = await knownLinks(tx, identifiers)
    // Link the identifiers nobody else holds (a publisher's own declaration and other contributions win).
    const free = identifiers.filter((identifier) => !known.has(keyOf(identifier)))
    if (!existingRid && free.length === 0) continue
    const rid = existingRid ?? uuidv7()
    if (existingRid) {
      await tx.run(
        `UPDATE registry_catalog_entries SET property_id = ?, status = 'active', updated_at = ?, source_updated_at = ?
         WHERE property_rid = ?`,
        [property.property_id, at, at, rid],
      )
    } else {
      await insertRows(tx, 'registry_catalog_entries', ENTRY_INSERT_COLUMNS, [
        [
          rid,
          property.property_id,
          'property',
          'community_mirror',
          'active',
          null,
          origin,
          at,
          at,
          at,
          origin,
        ],
      ])
    }
    kept.add(rid)
    await insertRows(
      tx,
      'registry_catalog_links',
      LINK_COLUMNS,
      free.map((identifier) => [
        identifier.type,
        identifier.value,
        rid,
        STRENGTH_OF.community_mirror,
        'active',
        'community_mirror',
        platform,
        origin,
        at,
        at,
      ]),
      'ON CONFLICT (identifier_type, identifier_value) DO NOTHING',
    )
  }
  const stale = await tx.all<{ property_rid: string }>(
    "SELECT property_rid FROM registry_catalog_entries WHERE origin = ? AND status <> 'retired'",
    [origin],
  )
  const retire = stale.map((row) => row.property_rid).filter((rid) => !kept.has(rid))
  for (const part of chunks(retire)) await retireEntries(tx, part, at)
}

/** Retires every catalog entry derived from a community mirror (its deletion) inside `tx`. */
export async function retireMirrorEntries(tx: SqlExecutor, platform: string, at: string): Promise<void> {
  const rows = await tx.all<{ property_rid: string }>(
    "SELECT property_rid FROM registry_catalog_entries WHERE origin = ? AND status <> 'retired'",
    [`mirror:${platform}`],
  )
  for (const part of chunks(rows.map((row) => row.property_rid))) await retireEntries(tx, part, at)
}

/** Marks entries retired (sync readers see the change) and frees their mirror-derived identifier links. */
async function retireEntries(tx: SqlExecutor, rids: readonly string[], at: string): Promise<void> {
  if (rids.length === 0) return
  await tx.run(
    `UPDATE registry_catalog_entries SET status = 'retired', updated_at = ?, source_updated_at = ?
     WHERE property_rid IN (${placeholders(rids.length)})`,
    [at, at, ...rids],
  )
  await tx.run(
    `DELETE FROM registry_catalog_links WHERE provenance_type = 'community_mirror'
     AND property_rid IN (${placeholders(rids.length)})`,
    rids,
  )
}

/** The catalog statements on `db`. */
export function catalogStore(db: SqlDriver): CatalogStore {
  const resolveWith = async (
    tx: SqlExecutor,
    inputs: readonly ResolveInput[],
    options: Parameters<CatalogStore['resolve']>[1],
  ): Promise<ResolvedIdentifier[]> => {
    const candidates = inputs.filter((input) => !input.excluded).map((input) => input.identifier)
    const known = await knownLinks(tx, candidates)
    const create = new Map<string, CatalogIdentifier>()
    if (options.mode === 'resolve') {
      for (const identifier of candidates) {
        const key = keyOf(identifier)
        if (!known.has(key)) create.set(key, identifier)
      }
    }
    const created = new Map<string, string>()
    if (create.size > 0) {
      const { type, context } = options.provenance
      const by = options.orgId ?? null
      const fresh = [...create.entries()].map(([key, identifier]) => ({ key, identifier, rid: uuidv7() }))
      await insertRows(
        tx,
        'registry_catalog_entries',
        ENTRY_INSERT_COLUMNS,
        fresh.map(({ rid }) => [
          rid,
          null,
          'property',
          type,
          'active',
          null,
          by,
          options.at,
          options.at,
          options.at,
          null,
        ]),
      )
      await insertRows(
        tx,
        'registry_catalog_links',
        LINK_COLUMNS,
        fresh.map(({ identifier, rid }) => [
          identifier.type,
          identifier.value,
          rid,
          STRENGTH_OF[type],
          'active',
          type,
          context ?? null,
          by,
          options.at,
          options.at,
        ]),
        'ON CONFLICT (identifier_type, identifier_value) DO NOTHING',
      )
      // A concurrent resolve may have linked some of these first: its handle wins, ours is removed.
      const now = await knownLinks(
        tx,
        fresh.map(({ identifier }) => identifier),
      )
      const lost: string[] = []
      for (const { key, rid } of fresh) {
        const winner = now.get(key)
        if (winner?.rid === rid) created.set(key, rid)
        else {
          lost.push(rid)
          if (winner) known.set(key, winner)
        }
      }
      for (const part of chunks(lost)) {
        await tx.run(
          `DELETE FROM registry_catalog_entries WHERE property_rid IN (${placeholders(part.length)})`,
          part,
        )
      }
    }
    const results: ResolvedIdentifier[] = []
    const seenCreated = new Set<string>()
    for (const input of inputs) {
      const { identifier } = input
      if (input.excluded) {
        results.push({
          identifier,
          property_rid: null,
          classification: input.excluded,
          status: 'excluded',
          source: null,
        })
        continue
      }
      const key = keyOf(identifier)
      const rid = created.get(key)
      if (rid) {
        results.push({
          identifier,
          property_rid: rid,
          classification: 'property',
          status: seenCreated.has(key) ? 'existing' : 'created',
          source: options.provenance.type,
        })
        seenCreated.add(key)
        continue
      }
      const link = known.get(key)
      if (link?.suspended) {
        results.push({
          identifier,
          property_rid: null,
          classification: 'disputed',
          status: 'excluded',
          source: link.source,
        })
      } else if (link) {
        results.push({
          identifier,
          property_rid: link.rid,
          classification: link.classification,
          status: 'existing',
          source: link.source,
        })
      } else {
        results.push({
          identifier,
          property_rid: null,
          classification: 'unknown',
          status: 'excluded',
          source: null,
          not_found: true,
        })
      }
    }
    if (options.mode === 'resolve') {
      const rids = [
        ...new Set(results.flatMap((result) => (result.property_rid ? [result.property_rid] : []))),
      ]
      await insertRows(
        tx,
        'registry_catalog_activity',
        ['id', 'property_rid', 'org_id', 'provenance_type', 'provenance_context', 'created_at'],
        rids.map((rid) => [
          uuidv7(),
          rid,
          options.orgId ?? null,
          options.provenance.type,
          options.provenance.context ?? null,
          options.at,
        ]),
      )
    }
    return results
  }

  const filters = (query: BrowseQuery): { where: string[]; params: SqlValue[] } => {
    const where: string[] = []
    const params: SqlValue[] = []
    if (query.classification) {
      where.push('c.classification = ?')
      params.push(query.classification)
    }
    if (query.source) {
      where.push('c.source = ?')
      params.push(query.source)
    }
    if (query.status) {
      where.push('c.status = ?')
      params.push(query.status)
    }
    if (query.identifierType) {
      where.push(`EXISTS (SELECT 1 FROM ${LINKS} x WHERE x.rid = c.property_rid AND x.type = ?)`)
      params.push(query.identifierType)
    }
    if (query.search) {
      const pattern = containsPattern(query.search)
      where.push(
        `(lower(COALESCE(c.property_id, '')) LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM ${LINKS} x WHERE x.rid = c.property_rid AND lower(x.value) LIKE ? ESCAPE '\\'))`,
      )
      params.push(pattern, pattern)
    }
    if (query.minResolves !== undefined && query.minResolves > 0) {
      where.push(
        '(SELECT COUNT(*) FROM registry_catalog_activity a WHERE a.property_rid = c.property_rid) >= ?',
      )
      params.push(query.minResolves)
    }
    if (query.activeSince) {
      where.push(
        'EXISTS (SELECT 1 FROM registry_catalog_activity a WHERE a.property_rid = c.property_rid AND a.created_at >= ?)',
      )
      params.push(query.activeSince)
    }
    return { where, params }
  }

  return {
    resolve(inputs, options) {
      if (options.mode === 'lookup') return resolveWith(db, inputs, options)
      return db.transaction((tx) => resolveWith(tx, inputs, options))
    },
    async browse(query) {
      const { where, params } = filters(query)
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
      const pageWhere = [...where, ...(query.after ? ['c.property_rid > ?'] : [])]
      const rows = await db.all<CatalogEntry>(
        `SELECT ${ENTRY_COLUMNS} FROM ${CATALOG} c ${pageWhere.length ? `WHERE ${pageWhere.join(' AND ')}` : ''}
         ORDER BY c.property_rid LIMIT ?`,
        [...params, ...(query.after ? [query.after] : []), query.limit + 1],
      )
      const count = await db.one<{ n: number }>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM ${CATALOG} c ${clause}`,
        params,
      )
      const page = rows.slice(0, query.limit)
      const identifiers = new Map<string, CatalogIdentifier[]>()
      for (const part of chunks(page.map((row) => row.property_rid))) {
        const links = await db.all<{ rid: string; type: string; value: string }>(
          `SELECT x.rid, x.type, x.value FROM ${LINKS} x WHERE x.rid IN (${placeholders(part.length)})
           ORDER BY x.type, x.value`,
          part,
        )
        for (const link of links) {
          const list = identifiers.get(link.rid) ?? []
          list.push({ type: link.type, value: link.value })
          identifiers.set(link.rid, list)
        }
      }
      return {
        entries: page.map((row) => ({ ...row, identifiers: identifiers.get(row.property_rid) ?? [] })),
        total: Number(count?.n ?? 0),
        hasMore: rows.length > query.limit,
      }
    },
    async changedSince(since, limit) {
      const rows = await db.all<CatalogEntry>(
        `SELECT ${ENTRY_COLUMNS} FROM ${CATALOG} c WHERE c.updated_at > ?
         ORDER BY c.updated_at, c.property_rid LIMIT ?`,
        [since, limit + 1],
      )
      return { entries: rows.slice(0, limit), hasMore: rows.length > limit }
    },
    async changedAt(at, limit) {
      const rows = await db.all<CatalogEntry>(
        `SELECT ${ENTRY_COLUMNS} FROM ${CATALOG} c WHERE c.updated_at = ? ORDER BY c.property_rid LIMIT ?`,
        [at, limit],
      )
      return { entries: rows }
    },
    fileDispute(dispute) {
      return db.transaction(async (tx) => {
        const triage = await triageDispute(tx, dispute)
        if (triage === 'unknown_subject') return triage
        const record: DisputeRecord = { ...dispute, ...triage }
        await tx.run(
          `INSERT INTO registry_catalog_disputes (${DISPUTE_COLUMNS}) VALUES (${placeholders(12)})`,
          [
            record.id,
            record.dispute_type,
            record.subject_type,
            record.subject_value,
            record.claim,
            record.evidence,
            record.status,
            record.action_taken,
            record.reason,
            record.filed_by_org_id,
            record.created_at,
            record.updated_at,
          ],
        )
        return record
      })
    },
    async getDispute(id) {
      return db.one<DisputeRecord>(`SELECT ${DISPUTE_COLUMNS} FROM registry_catalog_disputes WHERE id = ?`, [
        id,
      ])
    },
  }
}

/** What filing a dispute does (in the filing transaction). */
async function triageDispute(
  tx: SqlExecutor,
  dispute: Omit<DisputeRecord, 'status' | 'action_taken' | 'reason'>,
): Promise<Pick<DisputeRecord, 'status' | 'action_taken' | 'reason'> | 'unknown_subject'> {
  const escalated = {
    status: 'escalated' as const,
    action_taken: 'escalated' as const,
    reason: 'a false-merge claim splits a property handle; a catalog moderator reviews it',
  }
  const queued = (reason: string) => ({
    status: 'pending_review' as const,
    action_taken: 'queued_for_review' as const,
    reason,
  })
  if (dispute.subject_type === 'identifier') {
    const value = dispute.subject_value
    const links = await tx.all<{ identifier_type: string; strength: string; status: string }>(
      'SELECT identifier_type, strength, status FROM registry_catalog_links WHERE identifier_value = ?',
      [value],
    )
    const declared = await tx.one<{ n: number }>(
      'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_property_identifiers WHERE identifier_value = ?',
      [value],
    )
    if (links.length === 0 && Number(declared?.n ?? 0) === 0) return 'unknown_subject'
    if (dispute.dispute_type === 'false_merge') return escalated
    if (dispute.dispute_type === 'identifier_link') {
      const suspendable = links.filter((link) => link.status === 'active' && link.strength !== 'strong')
      if (suspendable.length > 0) {
        await tx.run(
          `UPDATE registry_catalog_links SET status = 'suspended', updated_at = ?
           WHERE identifier_value = ? AND status = 'active' AND strength <> 'strong'`,
          [dispute.created_at, value],
        )
        return {
          status: 'suspended',
          action_taken: 'link_suspended',
          reason: `${suspendable.length} medium or weak link(s) of ${value} suspended until the dispute is reviewed`,
        }
      }
      return queued(
        `${value} is linked by a publisher declaration or another strong claim; queued for review`,
      )
    }
    return queued(`the ${dispute.dispute_type} claim on ${value} is queued for review`)
  }
  if (dispute.subject_type === 'property_rid') {
    const found = await tx.one<{ n: number }>(
      `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM ${CATALOG} c WHERE c.property_rid = ?`,
      [dispute.subject_value],
    )
    if (Number(found?.n ?? 0) === 0) return 'unknown_subject'
    if (dispute.dispute_type === 'false_merge') return escalated
    return queued(
      `the ${dispute.dispute_type} claim on property ${dispute.subject_value} is queued for review`,
    )
  }
  return queued(`the ${dispute.dispute_type} claim is queued for review`)
}
