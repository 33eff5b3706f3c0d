/**
 * The redirect rules of adagents.json discovery (conformance `adagents-discovery-redirects.json`):
 *
 * - The first fetch of `/.well-known/…` follows redirects that stay on the registrable domain (eTLD+1, Public
 *   Suffix List with its PRIVATE section) of the ORIGINALLY requested URL, never downgrade https, at most 3
 *   hops; each hop goes through the same SSRF-safe fetch (address checks on every hop).
 * - The `authoritative_location` dereference follows no redirect at all.
 *
 * The same rules serve brand.json discovery.
 */
import { SignatureError, type FetchedResource, type SafeFetch } from '@adwire/http-signatures'
import { registrableDomain } from '@adwire/http-signatures/internal'

/** At most this many redirects are followed on the first fetch. */
export const MAX_REDIRECTS = 3

export type RefusalReason =
  | 'cross_registrable_domain'
  | 'scheme_downgrade'
  | 'too_many_redirects'
  | 'redirect_on_authoritative_location'
  | 'redirect_without_location'
  | 'fetch_refused'
  | 'fetch_failed'

/** A fetch the rules (or the network) refused. */
export class CrawlFetchError extends Error {
  override readonly name = 'CrawlFetchError'
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly url: string,
  ) {
    super(message)
  }
}

export interface FetchOutcome {
  readonly response: FetchedResource
  /** The URL that answered (after the followed redirects). */
  readonly finalUrl: string
  readonly redirects: number
}

/** Which of the two fetches this is. */
export type FetchTarget = 'well_known' | 'authoritative_location'

async function once(fetch: SafeFetch, url: string, maxBytes: number): Promise<FetchedResource> {
  try {
    return await fetch(url, { maxBytes, redirect: 'manual' })
  } catch (error) {
    if (SignatureError.is(error)) {
      throw new CrawlFetchError(
        error.code === 'fetch_refused' ? 'fetch_refused' : 'fetch_failed',
        error.message,
        url,
      )
    }
    throw new CrawlFetchError('fetch_failed', `fetch of ${url} failed`, url)
  }
}

/**
 * Fetches `url` under the rules of `target`; with `followRedirects` false a redirect is answered as is.
 *
 * @throws {CrawlFetchError} with the refusal reason of the vectors
 * @example
 * const { response, finalUrl } = await fetchWithPolicy(fetch, 'https://pub.example/.well-known/adagents.json', 'well_known', 1 << 20)
 */
export async function fetchWithPolicy(
  fetch: SafeFetch,
  url: string,
  target: FetchTarget,
  maxBytes: number,
  followRedirects = true,
): Promise<FetchOutcome> {
  const anchor = registrableDomain(url)
  let current = url
  for (let redirects = 0; ; redirects += 1) {
    const response = await once(fetch, current, maxBytes)
    if (!followRedirects || response.status < 300 || response.status >= 400 || response.status === 304) {
      return { response, finalUrl: current, redirects }
    }
    if (target === 'authoritative_location') {
      throw new CrawlFetchError(
        'redirect_on_authoritative_location',
        `${current} redirected; the authoritative location may not redirect`,
        current,
      )
    }
    const location = response.headers.get('location')
    if (!location || !URL.canParse(location, current)) {
      throw new CrawlFetchError(
        'redirect_without_location',
        `${current} answered ${response.status} without a usable Location`,
        current,
      )
    }
    const next = new URL(location, current)
    if (redirects >= MAX_REDIRECTS) {
      throw new CrawlFetchError(
        'too_many_redirects',
        `more than ${MAX_REDIRECTS} redirects from ${url}`,
        current,
      )
    }
    if (new URL(current).protocol === 'https:' && next.protocol !== 'https:') {
      throw new CrawlFetchError(
        'scheme_downgrade',
        `${current} redirected to ${next.protocol} (https only)`,
        current,
      )
    }
    if (registrableDomain(next.href) !== anchor) {
      throw new CrawlFetchError(
        'cross_registrable_domain',
        `${current} redirected off ${anchor} to ${next.host}`,
        current,
      )
    }
    current = next.href
  }
}
