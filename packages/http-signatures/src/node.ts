/**
 * Node-only parts: the SSRF-safe fetch behind the key resolvers (node:http, node:https, node:dns). The main
 * entry stays web-standard; resolvers load this lazily when no `fetch` is injected.
 */
export { createSafeFetch, type LookupAddress, type SafeFetchOptions } from './keys/safe-fetch.js'
