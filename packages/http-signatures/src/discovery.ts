/**
 * `@adwire/http-signatures/discovery`: the discovery rules of `adagents.json` and `brand.json` shared by key
 * resolution in this package and by crawlers (the adwire registry): which HTTP redirects a `/.well-known/`
 * fetch may follow, and which document-level redirects (`authoritative_location`, the brand.json house
 * redirect) a document makes, one hop at most. Pure decisions: the caller fetches, through an SSRF-safe fetch.
 *
 * @packageDocumentation
 */
export {
  decideRedirect,
  MAX_DISCOVERY_REDIRECTS,
  type DiscoveryHop,
  type RedirectDecision,
  type RedirectRefusal,
  type RedirectStep,
} from './discovery/redirects.js'
export {
  documentHop,
  MAX_DOCUMENT_REDIRECTS,
  type DiscoveryDocument,
  type DocumentHop,
} from './discovery/documents.js'
