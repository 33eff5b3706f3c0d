/**
 * Cross-entity full-text search over the index of migration 6 (see `search-schema.ts`): SQLite FTS5 (one table
 * per entity type) ranked by `bm25`, PostgreSQL `tsvector` (one partial GIN index per type) ranked by `ts_rank`; every query term is a prefix (`acm` finds Acme) and all
 * terms must match. One category per query, ranked and limited inside its index, then joined to its entity
 * table; ties keep index order, so offsets page through a stable order.
 */
import type { SqlDriver } from '@adwire/sql'
import { parseJson } from './json.js'
import type { SearchResults } from '@adwire/registry-client'

export type SearchCategory = 'brands' | 'publishers' | 'properties' | 'agents'

export const SEARCH_CATEGORIES: readonly SearchCategory[] = ['brands', 'publishers', 'properties', 'agents']

/** At most this many terms of a query are used; at most this many characters of each. */
export const MAX_SEARCH_TERMS = 8
export const MAX_TERM_LENGTH = 64

/**
 * The terms of a free-text query: runs of letters and digits, lowercased (the split both indexes make).
 *
 * @example
 * searchTerms('Acme-Outdoor.example!') // ['acme', 'outdoor', 'example']
 */
export function searchTerms(text: string): string[] {
  const terms = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((term) =>
    term.slice(0, MAX_TERM_LENGTH),
  )
  return [...new Set(terms)].slice(0, MAX_SEARCH_TERMS)
}

// One hit of each category, as `GET /api/search` answers it: the shapes @adwire/registry-client publishes.
export type BrandHit = SearchResults['brands'][number]
export type PublisherHit = SearchResults['publishers'][number]
export type PropertyHit = SearchResults['properties'][number]
export type AgentHit = NonNullable<SearchResults['agents']>[number]

export interface SearchHits {
  brands: BrandHit
  publishers: PublisherHit
  properties: PropertyHit
  agents: AgentHit
}

export interface SearchStore {
  /** One page of `category` matching every term, best first. */
  search<C extends SearchCategory>(
    category: C,
    terms: readonly string[],
    limit: number,
    offset: number,
  ): Promise<Array<SearchHits[C]>>
}

const ENTITY_TYPE: Record<SearchCategory, string> = {
  brands: 'brand',
  publishers: 'publisher',
  properties: 'property',
  agents: 'agent',
}

/** The columns each category reads from its entity table (`e` is the index entry, `x` the entity). */
const CATEGORY_SQL: Record<SearchCategory, { columns: string; join: string }> = {
  brands: {
    columns:
      'x.domain, x.brand_name, x.source, x.verified, CASE WHEN x.manifest IS NULL THEN 0 ELSE 1 END AS has_manifest, x.house_domain, x.keller_type',
    join: 'JOIN registry_brands x ON x.domain = e.entity_key',
  },
  publishers: {
    columns: `x.domain, x.source, x.valid, x.manager_domain, x.last_validated,
      (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_properties c WHERE c.publisher_domain = x.domain) AS property_count`,
    join: 'JOIN registry_publishers x ON x.domain = e.entity_key',
  },
  properties: {
    columns:
      'x.publisher_domain, x.property_id, x.rid AS property_rid, x.name, x.property_type, x.identifiers, x.tags',
    join: 'JOIN registry_properties x ON x.publisher_domain = e.parent_key AND x.property_id = e.entity_key',
  },
  agents: {
    columns: `e.entity_key AS url, e.title AS name,
      (SELECT MIN(m.type) FROM registry_member_agents m WHERE m.url_canonical = e.entity_key AND m.visibility = 'public') AS type,
      (SELECT CAST(COUNT(DISTINCT a.publisher_domain) AS INTEGER) FROM registry_authorizations a WHERE a.agent_url_canonical = e.entity_key) AS publisher_count`,
    join: '',
  },
}

type Row = Record<string, unknown>

/** Six significant digits: bm25 scores of small corpora are tiny but still ordered. */
const round = (value: unknown) => Number(Number(value).toPrecision(6))

function toHit(category: SearchCategory, row: Row): SearchHits[SearchCategory] {
  const score = round(row.score)
  switch (category) {
    case 'brands':
      return {
        domain: String(row.domain),
        brand_name: String(row.brand_name),
        source: String(row.source),
        verified: Number(row.verified) === 1,
        has_manifest: Number(row.has_manifest) === 1,
        house_domain: (row.house_domain as string | null) ?? null,
        keller_type: (row.keller_type as string | null) ?? null,
        score,
      }
    case 'publishers':
      return {
        domain: String(row.domain),
        source: String(row.source),
        valid: row.valid === null ? null : Number(row.valid) === 1,
        manager_domain: (row.manager_domain as string | null) ?? null,
        last_validated: (row.last_validated as string | null) ?? null,
        property_count: Number(row.property_count ?? 0),
        score,
      }
    case 'properties':
      return {
        publisher_domain: String(row.publisher_domain),
        property_id: String(row.property_id),
        property_rid: String(row.property_rid),
        name: String(row.name),
        property_type: String(row.property_type),
        identifiers: parseJson<PropertyHit['identifiers']>(row.identifiers as string) ?? [],
        tags: parseJson<string[]>(row.tags as string) ?? [],
        score,
      }
    case 'agents':
      return {
        url: String(row.url),
        name: String(row.name),
        type: (row.type as string | null) ?? null,
        publisher_count: Number(row.publisher_count ?? 0),
        score,
      }
  }
}

/** The search statements on `db`. */
export function searchStore(db: SqlDriver): SearchStore {
  return {
    async search(category, terms, limit, offset) {
      if (terms.length === 0) return []
      const { columns, join } = CATEGORY_SQL[category]
      const fts = `registry_search_fts_${ENTITY_TYPE[category]}`
      // The page of index rows first, ranked (ties in index order, so offsets page through a stable order) and
      // limited inside the index; then the page's entries and entities: no join touches the other matches.
      const page =
        db.dialect === 'sqlite'
          ? `SELECT rowid AS id, -bm25(${fts}, 10.0, 1.0) AS score FROM ${fts} WHERE ${fts} MATCH ?
             ORDER BY bm25(${fts}, 10.0, 1.0), rowid LIMIT ? OFFSET ?`
          : // The type is a literal (from ENTITY_TYPE), so the planner picks that type's partial index.
            `SELECT e.id, ts_rank(e.document, q.query) AS score
             FROM registry_search_entries e CROSS JOIN to_tsquery('simple', ?) AS q(query)
             WHERE e.document @@ q.query AND e.entity_type = '${ENTITY_TYPE[category]}'
             ORDER BY ts_rank(e.document, q.query) DESC, e.id LIMIT ? OFFSET ?`
      const match =
        db.dialect === 'sqlite'
          ? terms.map((term) => `"${term}"*`).join(' ')
          : terms.map((term) => `${term}:*`).join(' & ')
      const rows = await db.all<Row>(
        `SELECT ${columns}, h.score FROM (${page}) h JOIN registry_search_entries e ON e.id = h.id ${join}
         ORDER BY h.score DESC, h.id`,
        [match, limit, offset],
      )
      return rows.map((row) => toHit(category, row)) as Array<SearchHits[typeof category]>
    },
  }
}
