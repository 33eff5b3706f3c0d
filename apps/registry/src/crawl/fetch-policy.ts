/**
 * The crawler's fetch of adagents.json and brand.json under the discovery redirect rules, which are decided once
 * in `@adwire/http-signatures/discovery` ({@link decideRedirect}: at most 3 same-registrable-domain redirects
 * without https downgrade on the `/.well-known/` fetch, none on the `authoritative_location` fetch; conformance
 * `adagents-discovery-redirects.json`). Each hop goes through the same SSRF-safe fetch (address checks on every
 * hop).
 */
import { SignatureError, type FetchedResource, type SafeFetch } from '@adwire/http-signatures'
import {
  decideRedirect,
  MAX_DISCOVERY_REDIRECTS,
  type DiscoveryHop,
  type RedirectRefusal,
} from '@adwire/http-signatures/discovery'

/** At most this many redirects are followed on the first fetch. */
export const MAX_REDIRECTS = MAX_DISCOVERY_REDIRECTS

export type RefusalReason = RedirectRefusal | 'fetch_refused' | 'fetch_failed'

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
export type FetchTarget = DiscoveryHop

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
  let current = url
  for (let redirects = 0; ; redirects += 1) {
    const response = await once(fetch, current, maxBytes)
    if (!followRedirects || response.status < 300 || response.status >= 400 || response.status === 304) {
      return { response, finalUrl: current, redirects }
    }
    const decision = decideRedirect({
      origin: url,
      current,
      status: response.status,
      location: response.headers.get('location'),
      hop: target,
      followed: redirects,
    })
    if ('refuse' in decision) throw new CrawlFetchError(decision.refuse, decision.message, current)
    current = decision.follow
  }
}
