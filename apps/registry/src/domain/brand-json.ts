/**
 * What a brand.json says about the domain it was fetched from: the house (portfolio variant), a brand of the
 * portfolio whose URL is on that domain, a brand agent, or a self-published brand.
 */
import type { BrandRecord } from './types.js'
import { normalizeDomain } from './names.js'

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The first name of a `names` array of localized names (`[{ "en": "Acme" }]`). */
export function firstName(names: unknown): string | undefined {
  if (!Array.isArray(names)) return undefined
  for (const entry of names) {
    if (isObject(entry))
      for (const value of Object.values(entry)) if (typeof value === 'string' && value) return value
  }
  return undefined
}

const KELLER = new Set(['master', 'sub_brand', 'endorsed', 'independent'])

export type BrandFacts = Pick<
  BrandRecord,
  | 'brand_name'
  | 'names'
  | 'keller_type'
  | 'parent_brand'
  | 'house_domain'
  | 'house_name'
  | 'brand_agent_url'
  | 'manifest'
>

/**
 * The facts for `domain` in `document`, or `undefined` when it names no brand for that domain.
 *
 * @example
 * brandFactsFrom({ house: { domain: 'acme.example', name: 'Acme' }, brands: [] }, 'acme.example')
 * // { brand_name: 'Acme', keller_type: 'master', house_domain: 'acme.example', house_name: 'Acme' }
 */
export function brandFactsFrom(document: JsonObject, domain: string): BrandFacts | undefined {
  const house = isObject(document.house) ? document.house : undefined
  const houseDomain = house ? normalizeDomain(house.domain) : undefined
  const houseName = house && typeof house.name === 'string' ? house.name : undefined
  const brands = Array.isArray(document.brands) ? document.brands.filter(isObject) : []
  const agentOf = (value: unknown): string | undefined => {
    if (isObject(value) && typeof value.url === 'string') return value.url
    return undefined
  }
  const fromBrand = (brand: JsonObject): BrandFacts => {
    const names = Array.isArray(brand.names)
      ? (brand.names.filter(isObject) as Array<Record<string, string>>)
      : undefined
    const keller =
      typeof brand.keller_type === 'string' && KELLER.has(brand.keller_type)
        ? (brand.keller_type as BrandFacts['keller_type'])
        : undefined
    const agent = agentOf(brand.brand_agent) ?? agentOf(document.brand_agent)
    return {
      brand_name: firstName(brand.names) ?? (typeof brand.id === 'string' ? brand.id : domain),
      ...(names ? { names } : {}),
      ...(keller ? { keller_type: keller } : {}),
      ...(typeof brand.parent_brand === 'string' ? { parent_brand: brand.parent_brand } : {}),
      ...(houseDomain ? { house_domain: houseDomain } : {}),
      ...(houseName ? { house_name: houseName } : {}),
      ...(agent ? { brand_agent_url: agent } : {}),
      manifest: brand,
    }
  }
  const onDomain = brands.find((brand) => normalizeDomain(brand.url) === domain)
  if (onDomain) return fromBrand(onDomain)
  if (house && houseDomain === domain) {
    const single = brands.length === 1 ? brands[0] : undefined
    if (single)
      return {
        ...fromBrand(single),
        brand_name: firstName(single.names) ?? houseName ?? domain,
        keller_type: 'master',
      }
    return {
      brand_name: houseName ?? domain,
      keller_type: 'master',
      house_domain: domain,
      ...(houseName ? { house_name: houseName } : {}),
      ...(agentOf(document.brand_agent) ? { brand_agent_url: agentOf(document.brand_agent)! } : {}),
    }
  }
  if (!house && (document.names || document.id)) return fromBrand(document)
  const agent = agentOf(document.brand_agent)
  if (agent) return { brand_name: domain, brand_agent_url: agent }
  return undefined
}
