import { getDomain } from 'tldts'
import { SignatureError } from '../errors.js'
import { isObject } from './json-document.js'

/** How an agent URL was found bound to a brand.json URL. */
export interface BrandOriginBinding {
  /** The agent's registrable domain (eTLD+1), or its whole host when it has none (an IP, `localhost`). */
  readonly agentSite: string
  /** The same for the brand.json URL. */
  readonly brandSite: string
  readonly via: 'same-site' | 'authorized-operator'
}

/** Options of {@link assertBrandOrigin}. */
export interface BrandOriginOptions {
  /** The brand.json `authorized_operators[]` (as parsed), consulted when the sites differ. */
  readonly authorizedOperators?: unknown
  /** Unix seconds, for the operators' `valid_from` / `valid_until`. Default: the system clock. */
  readonly now?: number
}

/**
 * The registrable domain (eTLD+1) of a URL's host, from the Public Suffix List snapshot bundled with `tldts`
 * (ICANN and PRIVATE sections, as security.mdx asks), lowercased; the bare host when there is none.
 *
 * @example
 * registrableDomain('https://agent.ads.example.co.uk/mcp') // 'example.co.uk'
 * registrableDomain('https://alice.github.io/brand.json') // 'alice.github.io'
 */
export function registrableDomain(url: string): string {
  const host = new URL(url).hostname.toLowerCase()
  const bare = host.startsWith('[') ? host.slice(1, -1) : host
  return getDomain(bare, { allowPrivateDomains: true, extractHostname: false }) ?? bare
}

/**
 * The origin binding of the `identity.brand_json_url` bootstrap (AdCP 3.1 security.mdx, brand_json_url
 * discovery step 3): the agent URL and the brand.json URL must share an eTLD+1, or the brand.json's
 * `authorized_operators[]` must list the agent's eTLD+1 as a `domain` (an entry counts only within its
 * `valid_from` / `valid_until`; its `brands` scope is not consulted, since a transport signature names no brand).
 *
 * @throws {SignatureError} `request_signature_brand_origin_mismatch`
 * @example
 * assertBrandOrigin('https://ads.seller.example/mcp', 'https://seller.example/.well-known/brand.json')
 * // { agentSite: 'seller.example', brandSite: 'seller.example', via: 'same-site' }
 */
export function assertBrandOrigin(
  agentUrl: string,
  brandJsonUrl: string,
  options: BrandOriginOptions = {},
): BrandOriginBinding {
  const agentSite = registrableDomain(agentUrl)
  const brandSite = registrableDomain(brandJsonUrl)
  if (agentSite === brandSite) return { agentSite, brandSite, via: 'same-site' }
  const now = options.now ?? Math.floor(Date.now() / 1000)
  const operators = Array.isArray(options.authorizedOperators)
    ? (options.authorizedOperators as unknown[])
    : []
  for (const operator of operators) {
    if (!isObject(operator) || typeof operator.domain !== 'string') continue
    if (operator.domain.toLowerCase() !== agentSite) continue
    if (!withinValidity(operator.valid_from, operator.valid_until, now)) continue
    return { agentSite, brandSite, via: 'authorized-operator' }
  }
  throw new SignatureError(
    'request_signature_brand_origin_mismatch',
    `agent site ${agentSite} is neither the brand.json site ${brandSite} nor one of its authorized operators`,
    7,
  )
}

function withinValidity(from: unknown, until: unknown, now: number): boolean {
  const start = typeof from === 'string' ? Date.parse(from) / 1000 : Number.NEGATIVE_INFINITY
  const end = typeof until === 'string' ? Date.parse(until) / 1000 : Number.POSITIVE_INFINITY
  // An unparseable bound makes the entry inactive (NaN comparisons are false): fail closed.
  return now >= start && now < end
}
