/**
 * Corrections to the OpenAPI document, written by hand on top of the generated types (which stay untouched).
 * Each one follows what the registry actually does, as recorded in the adwire AdCP notes (§1.4, §8).
 */
import type { OperationResponse, RegistryFeedEvent, Schemas } from './types.js'

/**
 * Which publishers a selector addresses: one `publisher_domain`, the `publisher_domains` fan-out (the same
 * selector applied to each listed publisher; a non-empty list), or neither, which means every publisher whose
 * adagents.json authorizes the agent. Naming both is rejected (`400 invalid_selector`).
 */
export type SelectorPublishers =
  | { publisher_domain: string; publisher_domains?: never }
  | { publisher_domain?: never; publisher_domains: string[] }
  | { publisher_domain?: never; publisher_domains?: never }

/**
 * The selector the registry consumes in `publisher_properties`: the AdCP shape, keyed by `selection_type`.
 * The OpenAPI component (`property_types`/`tags`, see {@link DocumentedPublisherPropertySelector}) does not match
 * the hosted registry's handler, which ignores it (notes §1.4.1, §8 #1). `all` and `by_tag` take any
 * {@link SelectorPublishers}; `by_id` needs `publisher_domain`, as property ids are publisher-scoped.
 *
 * @example
 * const everywhere: PublisherPropertySelector = { selection_type: 'by_tag', property_tags: ['news'] }
 * const some: PublisherPropertySelector = { publisher_domains: ['a.example', 'b.example'], selection_type: 'all' }
 */
export type PublisherPropertySelector =
  | (SelectorPublishers & { selection_type: 'all' })
  | { publisher_domain: string; publisher_domains?: never; selection_type: 'by_id'; property_ids: string[] }
  | (SelectorPublishers & { selection_type: 'by_tag'; property_tags: string[] })

/** The selector as the OpenAPI document declares it; the adwire registry accepts it too, as an extension. */
export type DocumentedPublisherPropertySelector = Schemas['PublisherPropertySelector']

/** Body of `POST /api/registry/expand/product-identifiers` and `POST /api/registry/validate/product-authorization`. */
export interface ProductSelectorRequest {
  agent_url: string
  publisher_properties: Array<PublisherPropertySelector | DocumentedPublisherPropertySelector>
}

/** One property the agent is authorized to sell, as expanded (the OpenAPI types `properties` as `unknown[]`). */
export interface ExpandedProperty {
  publisher_domain: string
  property_id: string
  property_name: string
  property_type: string
  identifiers: Array<{ type: string; value: string }>
  tags: string[]
}

/** One identifier of an expanded property, flattened for caching. */
export interface ExpandedIdentifier {
  type: string
  value: string
  property_id: string
  publisher_domain: string
}

/** Answer of `POST /api/registry/expand/product-identifiers`. */
export interface ExpandProductIdentifiersResponse {
  agent_url: string
  properties: ExpandedProperty[]
  identifiers: ExpandedIdentifier[]
  property_count: number
  identifier_count: number
  generated_at: string
}

/** Answer of `POST /api/registry/validate/product-authorization`. */
export interface ProductAuthorizationResponse {
  agent_url: string
  authorized: boolean
  checked_at: string
  [key: string]: unknown
}

/**
 * One hit of `GET /api/brands/find`. The OpenAPI nests `results` twice (`FindCompanyResult[]`, each with its
 * own `results`); the registry returns a flat list of these (notes §1.4.3, §8 #2).
 */
export type FindBrandResult = Schemas['CompanySearchResult']

/** Answer of `GET /api/brands/find`: a flat list. */
export interface FindBrandsResponse {
  results: FindBrandResult[]
}

/**
 * One page of the change feed (`GET /api/registry/feed`). Semantics the document leaves implicit (notes
 * §1.4.5): events are ordered by their UUIDv7 `event_id`; `cursor` is the last returned `event_id`, or the
 * request's cursor echoed back when the page is empty (`null` when none was sent); the next request returns
 * events strictly after it; `has_more: false` means caught up. A cursor is tied to its `types` filter. An
 * unknown or expired cursor answers 410 `cursor_expired`.
 */
export interface FeedPage extends Omit<OperationResponse<'getRegistryFeed'>, 'events' | 'cursor'> {
  events: RegistryFeedEvent[]
  cursor: string | null
}

/** A message of the SSE feed stream (`GET /api/registry/feed/stream`); the resume cursor is in `data`. */
export type FeedStreamMessage =
  | { event: 'feed'; data: FeedPage }
  | {
      event: 'heartbeat'
      data: { generated_at: string; cursor: string | null; freshness?: FeedPage['freshness'] }
    }
  | { event: 'error'; data: { error?: unknown; code?: string; message?: string } }

/**
 * `GET /api/search`: the document's `brands`, `publishers` and `properties` (typed `unknown[]` upstream), with
 * the members adwire's registry answers; `agents` and `has_more` are adwire additions (absent elsewhere).
 */
export interface SearchResults {
  brands: Array<{
    domain: string
    brand_name: string
    source: string
    verified: boolean
    has_manifest: boolean
    house_domain: string | null
    keller_type: string | null
    score: number
  }>
  publishers: Array<{
    domain: string
    source: string
    valid: boolean | null
    manager_domain: string | null
    last_validated: string | null
    property_count: number
    score: number
  }>
  properties: Array<{
    publisher_domain: string
    property_id: string
    property_rid: string
    name: string
    property_type: string
    identifiers: Array<{ type: string; value: string }>
    tags: string[]
    score: number
  }>
  agents?: Array<{ url: string; name: string; type: string | null; publisher_count: number; score: number }>
  has_more?: Record<string, boolean>
}
