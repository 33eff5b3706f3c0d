import { isObject } from '../keys/json-document.js'

/** The two discovery documents. */
export type DiscoveryDocument = 'adagents' | 'brand_json'

/**
 * At most this many document-level redirects (`authoritative_location`, the brand.json house redirect) are
 * followed: the document a pointer names must hold data itself.
 */
export const MAX_DOCUMENT_REDIRECTS = 1

/** What a fetched discovery document is: data, a pointer to the authoritative copy, or a broken pointer. */
export type DocumentHop =
  | { readonly kind: 'data' }
  | { readonly kind: 'pointer'; readonly location: string }
  | { readonly kind: 'invalid_pointer'; readonly message: string }

const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/

const pointerTo = (location: unknown): DocumentHop =>
  typeof location === 'string' && URL.canParse(location)
    ? { kind: 'pointer', location: new URL(location).href }
    : { kind: 'invalid_pointer', message: 'authoritative_location is not a URL' }

/**
 * Classifies a parsed discovery document by its document-level redirect (AdCP 3.1 adagents.mdx and
 * brand-protocol discovery):
 *
 * - adagents.json: a document without `authorized_agents` that has `authoritative_location` points there;
 * - brand.json: `authoritative_location` points there; a house redirect `{ "house": "<domain>" }` points to
 *   `https://<domain>/.well-known/brand.json`.
 *
 * Anything else (not an object included) is `data`: the caller validates it. Follow at most
 * {@link MAX_DOCUMENT_REDIRECTS} pointer; the document it names must classify as `data`.
 *
 * @example
 * documentHop('adagents', { authoritative_location: 'https://cdn.example/adagents.json' })
 * // { kind: 'pointer', location: 'https://cdn.example/adagents.json' }
 * documentHop('brand_json', { house: 'holdco.example' })
 * // { kind: 'pointer', location: 'https://holdco.example/.well-known/brand.json' }
 */
export function documentHop(document: DiscoveryDocument, parsed: unknown): DocumentHop {
  if (!isObject(parsed)) return { kind: 'data' }
  if (document === 'adagents') {
    return 'authoritative_location' in parsed && !('authorized_agents' in parsed)
      ? pointerTo(parsed.authoritative_location)
      : { kind: 'data' }
  }
  if (parsed.authoritative_location !== undefined) return pointerTo(parsed.authoritative_location)
  if (typeof parsed.house === 'string') {
    return DOMAIN.test(parsed.house)
      ? { kind: 'pointer', location: `https://${parsed.house}/.well-known/brand.json` }
      : { kind: 'invalid_pointer', message: 'house is not a domain name' }
  }
  return { kind: 'data' }
}
