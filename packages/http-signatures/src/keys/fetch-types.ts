/**
 * The fetch shape key discovery uses. Web-standard types only, so resolvers stay runtime-neutral; the
 * SSRF-safe Node implementation is {@link createSafeFetch} in `safe-fetch.ts`, loaded lazily.
 */

/** A fetched document: the whole body, already bounded by the size cap. */
export interface FetchedResource {
  /** The URL that was fetched (never a redirect target: redirects are not followed). */
  readonly url: string
  readonly status: number
  readonly headers: Headers
  readonly body: Uint8Array
}

/** Per-call options of a {@link SafeFetch}. */
export interface SafeFetchInit {
  /** Size cap for this call, in bytes; a larger body aborts the transfer (`fetch_refused`). */
  readonly maxBytes?: number
  /** Extra request headers (`cache-control: no-cache` for a forced refresh, for instance). */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * `error` (default): a 3xx response is refused. `manual`: the 3xx is returned (empty body) so that a caller
   * which is allowed one hop can validate and fetch the `location` itself, through the same SSRF checks.
   */
  readonly redirect?: 'error' | 'manual'
}

/**
 * A GET that refuses unsafe targets and bounds size and time. Throws {@link SignatureError} `fetch_refused`
 * (policy: scheme, address, redirect, size) or `fetch_failed` (network, timeout); any HTTP status is returned.
 *
 * @example
 * const fetch: SafeFetch = createSafeFetch()
 * const { status, body } = await fetch('https://seller.example/.well-known/jwks.json', { maxBytes: 65_536 })
 */
export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<FetchedResource>

let shared: Promise<SafeFetch> | undefined

/**
 * The default fetch of the resolvers: `createSafeFetch()` with its defaults, imported on first use so that
 * code which injects its own `fetch` never loads `node:http`.
 *
 * @example
 * const fetch = defaultSafeFetch()
 * await fetch('https://seller.example/.well-known/brand.json', { maxBytes: 262_144 })
 */
export function defaultSafeFetch(): SafeFetch {
  return async (url, init) => {
    shared ??= import('./safe-fetch.js').then((module) => module.createSafeFetch())
    return (await shared)(url, init)
  }
}
