/** Brand facts and their revision history. */
import type { BrandRecord, BrandSource, Revision } from '../domain/types.js'
import { placeholders, type SqlDriver, type SqlExecutor } from '@adwire/sql'
import { compact, containsPattern, jsonText, parseJson } from './json.js'

interface BrandRow {
  domain: string
  id: string
  brand_name: string
  source: BrandSource
  names: string | null
  keller_type: BrandRecord['keller_type'] | null
  parent_brand: string | null
  house_domain: string | null
  house_name: string | null
  brand_agent_url: string | null
  manifest: string | null
  document: string | null
  document_url: string | null
  status_code: number | null
  verified: number
  fetched_at: string | null
  owner_org_id: string | null
  created_at: string
  updated_at: string
}

const toBrand = (row: BrandRow): BrandRecord =>
  compact({
    ...row,
    names: parseJson<BrandRecord['names']>(row.names),
    manifest: parseJson<Record<string, unknown>>(row.manifest),
    document: parseJson<Record<string, unknown>>(row.document),
    verified: row.verified === 1,
  }) as BrandRecord

export interface BrandListQuery {
  readonly search?: string
  readonly source?: BrandSource
  readonly limit: number
  readonly offset: number
}

export interface BrandStats {
  total: number
  hosted: number
  brand_json: number
  community: number
  enriched: number
  stub: number
  houses: number
  sub_brands: number
  with_manifest: number
}

export interface BrandStore {
  getBrand(domain: string): Promise<BrandRecord | undefined>
  getBrands(domains: readonly string[]): Promise<BrandRecord[]>
  listBrands(query: BrandListQuery): Promise<{ brands: BrandRecord[]; total: number }>
  brandStats(): Promise<BrandStats>
  findBrands(text: string, limit: number): Promise<BrandRecord[]>
  /** Inserts or replaces a brand and records a revision; resolves to the revision number. */
  putBrand(brand: BrandRecord, revision: Omit<Revision, 'revision_number' | 'created_at'>): Promise<number>
  history(
    kind: 'brand' | 'property',
    domain: string,
    limit: number,
    offset: number,
  ): Promise<{ total: number; revisions: Revision[] }>
}

const COLUMNS =
  'domain, id, brand_name, source, names, keller_type, parent_brand, house_domain, house_name, brand_agent_url, manifest, document, document_url, status_code, verified, fetched_at, owner_org_id, created_at, updated_at'

/** Appends a revision of `domain` (brand or property) inside `tx`; resolves to its number. */
export async function addRevision(
  tx: SqlExecutor,
  kind: 'brand' | 'property',
  domain: string,
  revision: Omit<Revision, 'revision_number' | 'created_at'>,
  at: string,
): Promise<number> {
  const last = await tx.one<{ n: number | null }>(
    'SELECT MAX(revision_number) AS n FROM registry_revisions WHERE entity_kind = ? AND domain = ?',
    [kind, domain],
  )
  const number = Number(last?.n ?? 0) + 1
  await tx.run(
    `INSERT INTO registry_revisions (entity_kind, domain, revision_number, editor_name, edit_summary, source, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [kind, domain, number, revision.editor_name, revision.edit_summary, revision.source ?? null, at],
  )
  return number
}

/** The brand statements on `db`. */
export function brandStore(db: SqlDriver): BrandStore {
  return {
    async getBrand(domain) {
      const row = await db.one<BrandRow>(`SELECT ${COLUMNS} FROM registry_brands WHERE domain = ?`, [domain])
      return row && toBrand(row)
    },
    async getBrands(domains) {
      if (domains.length === 0) return []
      const rows = await db.all<BrandRow>(
        `SELECT ${COLUMNS} FROM registry_brands WHERE domain IN (${placeholders(domains.length)})`,
        domains,
      )
      return rows.map(toBrand)
    },
    async listBrands({ search, source, limit, offset }) {
      const where: string[] = []
      const params: (string | number)[] = []
      if (search) {
        where.push("(lower(domain) LIKE ? ESCAPE '\\' OR lower(brand_name) LIKE ? ESCAPE '\\')")
        params.push(containsPattern(search), containsPattern(search))
      }
      if (source) {
        where.push('source = ?')
        params.push(source)
      }
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
      const rows = await db.all<BrandRow>(
        `SELECT ${COLUMNS} FROM registry_brands ${clause} ORDER BY domain LIMIT ? OFFSET ?`,
        [...params, limit, offset],
      )
      const count = await db.one<{ n: number }>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_brands ${clause}`,
        params,
      )
      return { brands: rows.map(toBrand), total: Number(count?.n ?? 0) }
    },
    async brandStats() {
      const row = await db.one<Record<keyof BrandStats, number | null>>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS total,
          CAST(SUM(CASE WHEN source = 'hosted' THEN 1 ELSE 0 END) AS INTEGER) AS hosted,
          CAST(SUM(CASE WHEN source = 'brand_json' THEN 1 ELSE 0 END) AS INTEGER) AS brand_json,
          CAST(SUM(CASE WHEN source = 'community' THEN 1 ELSE 0 END) AS INTEGER) AS community,
          CAST(SUM(CASE WHEN source = 'enriched' THEN 1 ELSE 0 END) AS INTEGER) AS enriched,
          CAST(SUM(CASE WHEN source = 'stub' THEN 1 ELSE 0 END) AS INTEGER) AS stub,
          CAST(SUM(CASE WHEN keller_type = 'master' THEN 1 ELSE 0 END) AS INTEGER) AS houses,
          CAST(SUM(CASE WHEN keller_type = 'sub_brand' THEN 1 ELSE 0 END) AS INTEGER) AS sub_brands,
          CAST(SUM(CASE WHEN manifest IS NOT NULL THEN 1 ELSE 0 END) AS INTEGER) AS with_manifest
         FROM registry_brands`,
      )
      const stats = {} as BrandStats
      for (const key of Object.keys(row ?? {}) as (keyof BrandStats)[]) stats[key] = Number(row?.[key] ?? 0)
      return stats
    },
    async findBrands(text, limit) {
      const pattern = containsPattern(text)
      const rows = await db.all<BrandRow>(
        `SELECT ${COLUMNS} FROM registry_brands
         WHERE lower(brand_name) LIKE ? ESCAPE '\\' OR lower(domain) LIKE ? ESCAPE '\\'
         ORDER BY CASE WHEN lower(brand_name) = ? THEN 0 ELSE 1 END, brand_name LIMIT ?`,
        [pattern, pattern, text.toLowerCase(), limit],
      )
      return rows.map(toBrand)
    },
    putBrand(brand, revision) {
      return db.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO registry_brands (${COLUMNS}) VALUES (${placeholders(19)})
           ON CONFLICT (domain) DO UPDATE SET brand_name = excluded.brand_name, source = excluded.source,
             names = excluded.names, keller_type = excluded.keller_type, parent_brand = excluded.parent_brand,
             house_domain = excluded.house_domain, house_name = excluded.house_name,
             brand_agent_url = excluded.brand_agent_url, manifest = excluded.manifest, document = excluded.document,
             document_url = excluded.document_url, status_code = excluded.status_code, verified = excluded.verified,
             fetched_at = excluded.fetched_at, owner_org_id = excluded.owner_org_id,
             updated_at = excluded.updated_at`,
          [
            brand.domain,
            brand.id,
            brand.brand_name,
            brand.source,
            jsonText(brand.names),
            brand.keller_type ?? null,
            brand.parent_brand ?? null,
            brand.house_domain ?? null,
            brand.house_name ?? null,
            brand.brand_agent_url ?? null,
            jsonText(brand.manifest),
            jsonText(brand.document),
            brand.document_url ?? null,
            brand.status_code ?? null,
            brand.verified ? 1 : 0,
            brand.fetched_at ?? null,
            brand.owner_org_id ?? null,
            brand.created_at,
            brand.updated_at,
          ],
        )
        return addRevision(tx, 'brand', brand.domain, revision, brand.updated_at)
      })
    },
    async history(kind, domain, limit, offset) {
      const count = await db.one<{ n: number }>(
        'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_revisions WHERE entity_kind = ? AND domain = ?',
        [kind, domain],
      )
      const rows = await db.all<Revision & { source: string | null }>(
        `SELECT revision_number, editor_name, edit_summary, source, created_at FROM registry_revisions
         WHERE entity_kind = ? AND domain = ? ORDER BY revision_number DESC LIMIT ? OFFSET ?`,
        [kind, domain, limit, offset],
      )
      return {
        total: Number(count?.n ?? 0),
        revisions: rows.map((row) => compact({ ...row, revision_number: Number(row.revision_number) })),
      }
    },
  }
}
