/**
 * The registry's stored facts. Every fact carries its provenance: where it came from (`source`, `evidence`),
 * the URL it was read at and when.
 */

export type BrandSource = 'hosted' | 'brand_json' | 'community' | 'enriched' | 'stub'
export type PublisherSource = 'adagents_json' | 'hosted' | 'discovered' | 'community'
export type DiscoveryMethod =
  'direct' | 'authoritative_location' | 'ads_txt_managerdomain' | 'adagents_authoritative'
export type AgentType =
  'brand' | 'rights' | 'measurement' | 'governance' | 'creative' | 'sales' | 'buying' | 'signals' | 'unknown'
export type Visibility = 'private' | 'members_only' | 'public'

export interface Identifier {
  readonly type: string
  readonly value: string
}

export interface BrandRecord {
  readonly domain: string
  readonly id: string
  readonly brand_name: string
  readonly source: BrandSource
  readonly names?: Array<Record<string, string>>
  readonly keller_type?: 'master' | 'sub_brand' | 'endorsed' | 'independent'
  readonly parent_brand?: string
  readonly house_domain?: string
  readonly house_name?: string
  readonly brand_agent_url?: string
  readonly manifest?: Record<string, unknown>
  /** The brand.json document as read (source `brand_json`). */
  readonly document?: Record<string, unknown>
  readonly document_url?: string
  readonly status_code?: number
  readonly verified: boolean
  readonly fetched_at?: string
  /** The organization that saved a community brand (only it may edit it). */
  readonly owner_org_id?: string
  readonly created_at: string
  readonly updated_at: string
}

export interface PublisherRecord {
  readonly domain: string
  readonly source: PublisherSource
  /** The adagents.json document as resolved (after `authoritative_location`). */
  readonly document?: Record<string, unknown>
  readonly url?: string
  readonly resolved_url?: string
  readonly status_code?: number
  readonly response_bytes?: number
  readonly discovery_method?: DiscoveryMethod
  readonly manager_domain?: string
  /** Whether the last crawl found a valid file; `null` when never checked. */
  readonly valid: boolean | null
  readonly contact?: { name?: string; email?: string }
  readonly last_validated?: string
  readonly created_at: string
  readonly updated_at: string
}

export interface PropertyRecord {
  readonly publisher_domain: string
  readonly property_id: string
  /** Stable registry id of the property (UUID). */
  readonly rid: string
  readonly property_type: string
  readonly name: string
  readonly identifiers: Identifier[]
  readonly tags: string[]
  readonly source: PublisherSource
}

export interface AuthorizationRecord {
  readonly id: string
  readonly agent_url: string
  readonly agent_url_canonical: string
  readonly publisher_domain: string
  /** `null`: every property of the publisher (publisher-wide). */
  readonly property_id: string | null
  readonly authorized_for: string | null
  readonly authorization_type: string | null
  readonly evidence: 'adagents_json'
  readonly signing_keys: Record<string, unknown>[] | null
  readonly effective_from: string | null
  readonly effective_until: string | null
  readonly source_url: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface FeedEvent {
  readonly event_id: string
  readonly event_type: string
  readonly entity_type: string
  readonly entity_id: string
  readonly payload: Record<string, unknown>
  readonly actor: string
  readonly created_at: string
}

export interface MemberAgent {
  readonly org_id: string
  readonly url: string
  readonly name?: string
  readonly type: AgentType
  readonly visibility: Visibility
  readonly health_check_url?: string
  readonly created_at: string
  readonly updated_at: string
}

export interface OrgProfile {
  readonly org_id: string
  readonly name: string
  readonly is_personal: boolean
  readonly company_type?: string
  readonly revenue_tier?: string
  readonly marketing_opt_in: boolean
  readonly created_at: string
}

/** The member profile an organization's agents are listed on (created private by the first registration). */
export interface MemberProfile {
  readonly org_id: string
  readonly display_name: string
  readonly is_public: boolean
  readonly created_at: string
}

export type CrawlStatus = 'queued' | 'running' | 'deferred' | 'retrying' | 'completed' | 'invalid' | 'failed'

export interface CrawlRequest {
  readonly id: string
  readonly domain: string
  readonly status: CrawlStatus
  readonly attempts: number
  readonly max_attempts: number
  readonly requested_by: string | null
  readonly requested_at: string
  readonly started_at: string | null
  readonly last_attempted_at: string | null
  readonly completed_at: string | null
  readonly next_attempt_at: string | null
  readonly last_error_code: string | null
}

export interface Revision {
  readonly revision_number: number
  readonly editor_name: string
  readonly edit_summary: string
  readonly source?: string
  readonly created_at: string
}

/** What one crawl (or a hosted save) says a publisher declares: the input of a snapshot write. */
export interface PublisherSnapshot {
  readonly publisher: Omit<PublisherRecord, 'created_at' | 'updated_at'>
  readonly properties: readonly Omit<PropertyRecord, 'rid'>[]
  readonly authorizations: readonly Omit<
    AuthorizationRecord,
    'id' | 'agent_url_canonical' | 'created_at' | 'updated_at'
  >[]
}
