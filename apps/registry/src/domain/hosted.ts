/**
 * Registry-hosted files: where the registry serves a domain's hosted adagents.json and brand.json, the hosted
 * adagents.json document of a registry-held publisher, and the reading of an origin's pointer file
 * (verify-origin's failure classification).
 */
import type { Probe } from '../crawl/crawler.js'
import type { PropertyRecord, PublisherRecord } from './types.js'

export const ADAGENTS_SCHEMA = 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json'
export const BRAND_SCHEMA = 'https://adcontextprotocol.org/schemas/3.1.19/brand.json'

/** The query parameter carrying a claim token on an `authoritative_location` pointer. */
export const CLAIM_PARAM = 'adcp_claim'

/**
 * The URL the registry serves a domain's hosted adagents.json at.
 *
 * @example
 * hostedAdagentsUrl('https://registry.example', 'pub.example') // 'https://registry.example/hosted/pub.example/adagents.json'
 */
export const hostedAdagentsUrl = (base: string, domain: string): string =>
  `${base}/hosted/${domain}/adagents.json`

/** The URL the registry serves a domain's hosted brand.json at. */
export const hostedBrandJsonUrl = (base: string, domain: string): string =>
  `${base}/hosted/${domain}/brand.json`

/** Whether a publisher record is held by the registry (saved here) rather than read from its origin. */
export const isRegistryHosted = (publisher: PublisherRecord | undefined): boolean =>
  publisher !== undefined && (publisher.source === 'hosted' || publisher.source === 'community')

/**
 * The adagents.json the registry serves for a registry-held publisher. Identity only: `authorized_agents` is
 * always empty (sales authorization lives solely in a file the publisher's origin serves).
 */
export function hostedAdagentsDocument(
  publisher: PublisherRecord,
  properties: readonly PropertyRecord[],
): Record<string, unknown> {
  return {
    $schema: ADAGENTS_SCHEMA,
    ...(publisher.contact?.name && publisher.contact.email
      ? { contact: { name: publisher.contact.name, email: publisher.contact.email } }
      : {}),
    properties: properties.map((property) => ({
      property_id: property.property_id,
      property_type: property.property_type,
      name: property.name,
      identifiers: property.identifiers,
      ...(property.tags.length > 0 ? { tags: property.tags } : {}),
    })),
    authorized_agents: [],
    last_updated: publisher.updated_at,
  }
}

/** The verify-origin reasons of the OpenAPI document. */
export type OriginReason =
  | 'authoritative_location_pointer'
  | 'not_found'
  | 'invalid_json'
  | 'no_authoritative_location'
  | 'authoritative_location_mismatch'
  | 'unresolvable'
  | 'transient'

export interface OriginReading {
  readonly reason: OriginReason
  readonly detail: string
  /** The claim token the pointer carries (only when it points at the hosted URL). */
  readonly claimToken?: string
  /** The pointer as read (only when it points at the hosted URL). */
  readonly pointer?: string
}

/** `scheme://host/path` of a URL, host lowercased, without query or fragment. */
function withoutQuery(url: URL): string {
  return `${url.protocol}//${url.host.toLowerCase()}${url.pathname}`
}

/**
 * Classifies what the origin's `/.well-known/adagents.json` answered against the expected hosted URL.
 *
 * @example
 * readOriginPointer({ status: 404 }, 'https://r.example/hosted/p.example/adagents.json').reason // 'not_found'
 */
export function readOriginPointer(probe: Probe, hostedUrl: string): OriginReading {
  if (probe.failure) {
    const { reason, message } = probe.failure
    // An oversized body is a permanent problem of the file, not of the address.
    if (/exceeds/.test(message)) return { reason: 'invalid_json', detail: message }
    const unresolvable = reason === 'fetch_refused' || /has no address|ENOTFOUND|lookup/i.test(message)
    return { reason: unresolvable ? 'unresolvable' : 'transient', detail: message }
  }
  const status = probe.status ?? 0
  if (status === 404 || status === 410)
    return { reason: 'not_found', detail: `the origin answered ${status}` }
  if (status !== 200) {
    const transient = status >= 500 || status === 429 || (status >= 300 && status < 400)
    return {
      reason: transient ? 'transient' : 'not_found',
      detail: `the origin answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
    }
  }
  if (probe.notJson || typeof probe.json !== 'object' || probe.json === null || Array.isArray(probe.json))
    return { reason: 'invalid_json', detail: 'the origin file is not a JSON object' }
  const location = (probe.json as Record<string, unknown>).authoritative_location
  if (typeof location !== 'string' || location.trim() === '')
    return { reason: 'no_authoritative_location', detail: 'the origin file has no authoritative_location' }
  if (!URL.canParse(location))
    return { reason: 'authoritative_location_mismatch', detail: 'authoritative_location is not a URL' }
  const pointer = new URL(location)
  if (withoutQuery(pointer) !== withoutQuery(new URL(hostedUrl)))
    return {
      reason: 'authoritative_location_mismatch',
      detail: `authoritative_location points at ${withoutQuery(pointer)}, not ${hostedUrl}`,
    }
  const token = pointer.searchParams.get(CLAIM_PARAM) ?? undefined
  return {
    reason: 'authoritative_location_pointer',
    detail: 'the origin points at the registry-hosted adagents.json',
    pointer: location,
    ...(token ? { claimToken: token } : {}),
  }
}
