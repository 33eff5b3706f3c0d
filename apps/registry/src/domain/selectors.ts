/**
 * Publisher property selectors (adcp-notes §1.4.1, §8 #1). Two shapes are accepted:
 *
 * - AdCP: `{ publisher_domain | publisher_domains, selection_type: 'all' | 'by_id' | 'by_tag', property_ids?,
 *   property_tags? }` (`publisher_domains` fans the same selector out over each listed publisher; `by_id` is
 *   single-publisher, as AdCP property ids are publisher-scoped)
 * - documented: `{ publisher_domain?, property_ids?, property_types?, tags? }` (kinds AND-ed, values OR-ed;
 *   none given selects everything)
 *
 * Which publishers a selector addresses: its `publisher_domain`, each of its `publisher_domains`, or, when it
 * names none (the registry document and service spec make `publisher_domain` optional), every publisher whose
 * adagents.json authorizes the agent. Empty id or tag lists select nothing.
 */
import type { PropertyRecord } from './types.js'
import { normalizeDomain } from './names.js'

export interface Selector {
  readonly publisher_domain?: string
  readonly publisher_domains?: readonly string[]
  readonly selection_type?: string
  readonly property_ids?: readonly string[]
  readonly property_tags?: readonly string[]
  readonly property_types?: readonly string[]
  readonly tags?: readonly string[]
}

/** Why a selector cannot be used, or `undefined`. */
export function selectorProblem(selector: Selector, index: number): string | undefined {
  const at = `publisher_properties[${index}]`
  const type = selector.selection_type
  if (type !== undefined && !['all', 'by_id', 'by_tag'].includes(type)) {
    return `${at}.selection_type must be all, by_id or by_tag`
  }
  const { publisher_domain: domain, publisher_domains: domains } = selector
  if (domain !== undefined && domains !== undefined)
    return `${at} names publisher_domain and publisher_domains; give one of them`
  if (domain !== undefined && !normalizeDomain(domain)) return `${at}.publisher_domain must be a domain name`
  if (domains !== undefined) {
    if (!Array.isArray(domains) || domains.length === 0)
      return `${at}.publisher_domains must be a non-empty array of domain names`
    const bad = domains.findIndex((item) => typeof item !== 'string' || !normalizeDomain(item))
    if (bad !== -1) return `${at}.publisher_domains[${bad}] must be a domain name`
  }
  if (type === 'by_id' && domain === undefined) {
    return `${at}: selection_type by_id needs publisher_domain (property ids are publisher-scoped)`
  }
  return undefined
}

/**
 * The publisher domains a (valid) selector addresses, in order and without repeats; `authorizing` lists the
 * publishers that authorize the agent, for a selector that names none.
 *
 * @example
 * await selectorDomains({ selection_type: 'all' }, async () => ['a.example', 'b.example']) // both
 */
export async function selectorDomains(
  selector: Selector,
  authorizing: () => Promise<readonly string[]>,
): Promise<string[]> {
  if (selector.publisher_domain !== undefined) return [normalizeDomain(selector.publisher_domain)!]
  const listed = selector.publisher_domains?.map((domain) => normalizeDomain(domain)!)
  return [...new Set(listed ?? (await authorizing()))]
}

/** The members of `properties` the selector picks. */
export function applySelector(selector: Selector, properties: readonly PropertyRecord[]): PropertyRecord[] {
  switch (selector.selection_type) {
    case 'all':
      return [...properties]
    case 'by_id': {
      const ids = new Set(selector.property_ids ?? [])
      return properties.filter((property) => ids.has(property.property_id))
    }
    case 'by_tag': {
      const tags = new Set(selector.property_tags ?? [])
      return properties.filter((property) => property.tags.some((tag) => tags.has(tag)))
    }
    default: {
      const ids = selector.property_ids ? new Set(selector.property_ids) : undefined
      const types = selector.property_types ? new Set(selector.property_types) : undefined
      const tags = selector.tags ? new Set(selector.tags) : undefined
      return properties.filter(
        (property) =>
          (!ids || ids.has(property.property_id)) &&
          (!types || types.has(property.property_type)) &&
          (!tags || property.tags.some((tag) => tags.has(tag))),
      )
    }
  }
}
