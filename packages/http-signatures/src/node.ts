/**
 * Node-only parts: the SSRF-safe, address-pinned fetches (node:http, node:https, node:dns). The main entry stays
 * web-standard; resolvers load this lazily when no `fetch` is injected.
 */
export { createPinnedFetch, type PinnedFetchOptions } from './keys/pinned-fetch.js'
export { createSafeFetch, type LookupAddress, type SafeFetchOptions } from './keys/safe-fetch.js'
export type { TargetPolicy } from './keys/pinned-target.js'
