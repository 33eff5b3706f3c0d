/**
 * The governance policy registry: policies (registry-curated and community-contributed) and their revision
 * history, kept in `registry_revisions` under `entity_kind = 'policy'` beside the brand and property revisions.
 */
import type { Revision } from '../domain/types.js'
import type { SqlDriver, SqlExecutor, SqlValue } from '@adwire/sql'
import { containsPattern, jsonText, parseJson } from './json.js'

export type PolicyCategory = 'regulation' | 'standard'
export type PolicyEnforcement = 'must' | 'should' | 'may'

export interface PolicyExemplar {
  scenario: string
  explanation: string
}

/** A policy as the document's `Policy` schema shows it (nullable members are null, never absent). */
export interface PolicyRecord {
  policy_id: string
  version: string
  name: string
  description: string | null
  category: PolicyCategory
  enforcement: PolicyEnforcement
  jurisdictions: string[]
  region_aliases: Record<string, string[]>
  policy_categories: string[]
  channels: string[] | null
  governance_domains: string[]
  effective_date: string | null
  sunset_date: string | null
  source_url: string | null
  source_name: string | null
  policy: string
  guidance: string | null
  exemplars: { pass?: PolicyExemplar[]; fail?: PolicyExemplar[] } | null
  ext: Record<string, unknown> | null
  source_type: 'registry' | 'community'
  review_status: 'pending' | 'approved'
  created_at: string
  updated_at: string
  /** The organization that contributed a community policy (not on the wire). */
  owner_org_id?: string | null
}

export interface PolicyListQuery {
  readonly search?: string
  readonly category?: PolicyCategory
  readonly enforcement?: PolicyEnforcement
  readonly jurisdiction?: string
  readonly policyCategory?: string
  readonly governanceDomain?: string
  readonly limit: number
  readonly offset: number
}

export interface PolicyStore {
  get(policyId: string): Promise<PolicyRecord | undefined>
  getMany(policyIds: readonly string[]): Promise<PolicyRecord[]>
  /** Approved policies matching the query, and the facet counts of the whole match. */
  list(
    query: PolicyListQuery,
  ): Promise<{ policies: PolicyRecord[]; stats: { total: number; regulation: number; standard: number } }>
  /**
   * Inserts or replaces a policy and appends a revision in one transaction; resolves to the revision number.
   * `expectedUpdatedAt` guards a concurrent edit: when the stored row changed since it was read, nothing is
   * written and the result is `undefined`.
   */
  put(
    policy: PolicyRecord,
    revision: Omit<Revision, 'revision_number' | 'created_at'>,
    expectedUpdatedAt: string | undefined,
  ): Promise<number | undefined>
  history(policyId: string, limit: number, offset: number): Promise<{ total: number; revisions: Revision[] }>
}

const COLUMNS =
  'policy_id, version, name, description, category, enforcement, jurisdictions, region_aliases, policy_categories, channels, governance_domains, effective_date, sunset_date, source_url, source_name, policy, guidance, exemplars, ext, source_type, review_status, owner_org_id, created_at, updated_at'

type PolicyRow = Record<keyof PolicyRecord, string | null>

const toPolicy = (row: PolicyRow): PolicyRecord => ({
  policy_id: row.policy_id!,
  version: row.version!,
  name: row.name!,
  description: row.description,
  category: row.category as PolicyCategory,
  enforcement: row.enforcement as PolicyEnforcement,
  jurisdictions: parseJson<string[]>(row.jurisdictions) ?? [],
  region_aliases: parseJson<Record<string, string[]>>(row.region_aliases) ?? {},
  policy_categories: parseJson<string[]>(row.policy_categories) ?? [],
  channels: parseJson<string[]>(row.channels) ?? null,
  governance_domains: parseJson<string[]>(row.governance_domains) ?? [],
  effective_date: row.effective_date,
  sunset_date: row.sunset_date,
  source_url: row.source_url,
  source_name: row.source_name,
  policy: row.policy!,
  guidance: row.guidance,
  exemplars: parseJson<PolicyRecord['exemplars']>(row.exemplars) ?? null,
  ext: parseJson<Record<string, unknown>>(row.ext) ?? null,
  source_type: row.source_type as PolicyRecord['source_type'],
  review_status: row.review_status as PolicyRecord['review_status'],
  owner_org_id: row.owner_org_id,
  created_at: row.created_at!,
  updated_at: row.updated_at!,
})

const values = (policy: PolicyRecord): SqlValue[] => [
  policy.policy_id,
  policy.version,
  policy.name,
  policy.description,
  policy.category,
  policy.enforcement,
  jsonText(policy.jurisdictions),
  jsonText(policy.region_aliases),
  jsonText(policy.policy_categories),
  policy.channels === null ? null : jsonText(policy.channels),
  jsonText(policy.governance_domains),
  policy.effective_date,
  policy.sunset_date,
  policy.source_url,
  policy.source_name,
  policy.policy,
  policy.guidance,
  policy.exemplars === null ? null : jsonText(policy.exemplars),
  policy.ext === null ? null : jsonText(policy.ext),
  policy.source_type,
  policy.review_status,
  policy.owner_org_id ?? null,
  policy.created_at,
  policy.updated_at,
]

/** A `LIKE` pattern matching one quoted member of a JSON string array or object key (`"EU"`). */
const jsonMember = (value: string): string => containsPattern(JSON.stringify(value))

async function addPolicyRevision(
  tx: SqlExecutor,
  policyId: string,
  revision: Omit<Revision, 'revision_number' | 'created_at'>,
  at: string,
): Promise<number> {
  const last = await tx.one<{ n: number | null }>(
    "SELECT MAX(revision_number) AS n FROM registry_revisions WHERE entity_kind = 'policy' AND domain = ?",
    [policyId],
  )
  const number = Number(last?.n ?? 0) + 1
  await tx.run(
    `INSERT INTO registry_revisions (entity_kind, domain, revision_number, editor_name, edit_summary, source, created_at)
     VALUES ('policy', ?, ?, ?, ?, ?, ?)`,
    [policyId, number, revision.editor_name, revision.edit_summary, revision.source ?? null, at],
  )
  return number
}

/** The policy statements on `db`. */
export function policyStore(db: SqlDriver): PolicyStore {
  return {
    async get(policyId) {
      const row = await db.one<PolicyRow>(`SELECT ${COLUMNS} FROM registry_policies WHERE policy_id = ?`, [
        policyId,
      ])
      return row && toPolicy(row)
    },
    async getMany(policyIds) {
      if (policyIds.length === 0) return []
      const rows = await db.all<PolicyRow>(
        `SELECT ${COLUMNS} FROM registry_policies WHERE policy_id IN (${policyIds.map(() => '?').join(', ')})`,
        policyIds,
      )
      return rows.map(toPolicy)
    },
    async list(query) {
      const where = ["review_status = 'approved'"]
      const params: SqlValue[] = []
      if (query.search) {
        where.push(
          "(lower(name) LIKE ? ESCAPE '\\' OR lower(COALESCE(description, '')) LIKE ? ESCAPE '\\' OR lower(policy_id) LIKE ? ESCAPE '\\')",
        )
        const pattern = containsPattern(query.search)
        params.push(pattern, pattern, pattern)
      }
      if (query.category) {
        where.push('category = ?')
        params.push(query.category)
      }
      if (query.enforcement) {
        where.push('enforcement = ?')
        params.push(query.enforcement)
      }
      if (query.jurisdiction) {
        // A jurisdiction matches itself or any region whose alias list names it (`DE` matches an `EU` policy).
        where.push("(lower(jurisdictions) LIKE ? ESCAPE '\\' OR lower(region_aliases) LIKE ? ESCAPE '\\')")
        const pattern = jsonMember(query.jurisdiction)
        params.push(pattern, pattern)
      }
      if (query.policyCategory) {
        where.push("lower(policy_categories) LIKE ? ESCAPE '\\'")
        params.push(jsonMember(query.policyCategory))
      }
      if (query.governanceDomain) {
        where.push("lower(governance_domains) LIKE ? ESCAPE '\\'")
        params.push(jsonMember(query.governanceDomain))
      }
      const clause = `WHERE ${where.join(' AND ')}`
      const rows = await db.all<PolicyRow>(
        `SELECT ${COLUMNS} FROM registry_policies ${clause} ORDER BY name, policy_id LIMIT ? OFFSET ?`,
        [...params, query.limit, query.offset],
      )
      const stats = await db.one<{ total: number; regulation: number | null; standard: number | null }>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS total,
           CAST(SUM(CASE WHEN category = 'regulation' THEN 1 ELSE 0 END) AS INTEGER) AS regulation,
           CAST(SUM(CASE WHEN category = 'standard' THEN 1 ELSE 0 END) AS INTEGER) AS standard
         FROM registry_policies ${clause}`,
        params,
      )
      return {
        policies: rows.map(toPolicy),
        stats: {
          total: Number(stats?.total ?? 0),
          regulation: Number(stats?.regulation ?? 0),
          standard: Number(stats?.standard ?? 0),
        },
      }
    },
    put(policy, revision, expectedUpdatedAt) {
      return db.transaction(async (tx) => {
        if (expectedUpdatedAt === undefined) {
          const inserted = await tx.run(
            `INSERT INTO registry_policies (${COLUMNS}) VALUES (${COLUMNS.split(',')
              .map(() => '?')
              .join(', ')}) ON CONFLICT (policy_id) DO NOTHING`,
            values(policy),
          )
          if (inserted === 0) return undefined
        } else {
          const [, ...rest] = values(policy)
          const updated = await tx.run(
            `UPDATE registry_policies SET ${COLUMNS.split(', ')
              .slice(1)
              .map((column) => `${column} = ?`)
              .join(', ')} WHERE policy_id = ? AND updated_at = ?`,
            [...rest, policy.policy_id, expectedUpdatedAt],
          )
          if (updated === 0) return undefined
        }
        return addPolicyRevision(tx, policy.policy_id, revision, policy.updated_at)
      })
    },
    async history(policyId, limit, offset) {
      const count = await db.one<{ n: number }>(
        "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_revisions WHERE entity_kind = 'policy' AND domain = ?",
        [policyId],
      )
      const rows = await db.all<Revision & { source: string | null }>(
        `SELECT revision_number, editor_name, edit_summary, created_at FROM registry_revisions
         WHERE entity_kind = 'policy' AND domain = ? ORDER BY revision_number DESC LIMIT ? OFFSET ?`,
        [policyId, limit, offset],
      )
      return {
        total: Number(count?.n ?? 0),
        revisions: rows.map((row) => ({
          revision_number: Number(row.revision_number),
          editor_name: row.editor_name,
          edit_summary: row.edit_summary,
          created_at: row.created_at,
        })),
      }
    },
  }
}

/** The registry-curated policies every registry starts with (inserted once, by migration 7). */
export const REGISTRY_POLICIES: readonly Omit<PolicyRecord, 'created_at' | 'updated_at'>[] = [
  {
    policy_id: 'gdpr_consent',
    version: '1.0.0',
    name: 'GDPR Consent Requirements',
    description:
      'Personal data used for ad targeting in the EU and EEA needs a valid legal basis, usually consent.',
    category: 'regulation',
    enforcement: 'must',
    jurisdictions: ['EU', 'EEA'],
    region_aliases: {
      EU: [
        'AT',
        'BE',
        'BG',
        'CY',
        'CZ',
        'DE',
        'DK',
        'EE',
        'ES',
        'FI',
        'FR',
        'GR',
        'HR',
        'HU',
        'IE',
        'IT',
        'LT',
        'LU',
        'LV',
        'MT',
        'NL',
        'PL',
        'PT',
        'RO',
        'SE',
        'SI',
        'SK',
      ],
      EEA: ['IS', 'LI', 'NO'],
    },
    policy_categories: ['personal_data', 'targeting'],
    channels: null,
    governance_domains: ['campaign', 'audience'],
    effective_date: '2018-05-25',
    sunset_date: null,
    source_url: 'https://eur-lex.europa.eu/eli/reg/2016/679/oj',
    source_name: 'EUR-Lex',
    policy:
      'Do not target or measure people in the covered jurisdictions with personal data unless the signal carries a consent string that allows the purpose, or another lawful basis is documented for it.',
    guidance: 'Check the TCF consent string of each impression before applying audience segments.',
    exemplars: {
      pass: [
        {
          scenario: 'Contextual campaign in Germany with no audience data',
          explanation: 'No personal data is processed for targeting.',
        },
      ],
      fail: [
        {
          scenario: 'Retargeting French visitors whose consent string refuses purpose 4',
          explanation: 'Personalised advertising without consent for that purpose.',
        },
      ],
    },
    ext: null,
    source_type: 'registry',
    review_status: 'approved',
  },
  {
    policy_id: 'coppa_children',
    version: '1.0.0',
    name: 'COPPA Children Online Privacy',
    description: 'No behavioural advertising to children under 13 in the United States.',
    category: 'regulation',
    enforcement: 'must',
    jurisdictions: ['US'],
    region_aliases: {},
    policy_categories: ['children', 'personal_data'],
    channels: ['display', 'video', 'ctv'],
    governance_domains: ['campaign', 'property'],
    effective_date: '2000-04-21',
    sunset_date: null,
    source_url:
      'https://www.ftc.gov/legal-library/browse/rules/childrens-online-privacy-protection-rule-coppa',
    source_name: 'FTC',
    policy:
      'Inventory directed at children under 13 may carry contextual ads only: no behavioural targeting, no cross-site identifiers and no frequency data tied to a person.',
    guidance: null,
    exemplars: null,
    ext: null,
    source_type: 'registry',
    review_status: 'approved',
  },
  {
    policy_id: 'alcohol_placement_standard',
    version: '1.0.0',
    name: 'Alcohol Ad Placement Standard',
    description: 'Alcohol ads run only where the audience is overwhelmingly of legal drinking age.',
    category: 'standard',
    enforcement: 'should',
    jurisdictions: ['US', 'GB'],
    region_aliases: {},
    policy_categories: ['age_restricted', 'alcohol'],
    channels: null,
    governance_domains: ['campaign', 'creative', 'property'],
    effective_date: null,
    sunset_date: null,
    source_url: null,
    source_name: null,
    policy:
      'Place alcohol advertising only on properties whose audience is at least 70% of legal drinking age, and never next to content aimed at minors.',
    guidance: null,
    exemplars: null,
    ext: null,
    source_type: 'registry',
    review_status: 'approved',
  },
]

const literal = (value: SqlValue): string =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`

/** The statements of migration 7 that insert {@link REGISTRY_POLICIES} (kept if already present). */
export const REGISTRY_POLICY_INSERTS: readonly string[] = REGISTRY_POLICIES.map((policy) => {
  const at = '2026-01-01T00:00:00.000Z'
  const row = values({ ...policy, owner_org_id: null, created_at: at, updated_at: at })
  return `INSERT INTO registry_policies (${COLUMNS}) VALUES (${row.map(literal).join(', ')}) ON CONFLICT (policy_id) DO NOTHING`
})
