import { registrableDomain } from '../keys/brand-origin.js'

/**
 * At most this many HTTP redirects are followed on the first fetch of a `/.well-known/` discovery document
 * (conformance `adagents-discovery-redirects.json`). Key discovery for signature verification follows none
 * (AdCP 3.1 security.mdx: the trust-root fetches refuse HTTP redirects).
 */
export const MAX_DISCOVERY_REDIRECTS = 3

/** Which fetch of a discovery this is: the `/.well-known/` file, or the `authoritative_location` it names. */
export type DiscoveryHop = 'well_known' | 'authoritative_location'

/** Why an HTTP redirect of a discovery fetch is refused (the reasons of the conformance vectors). */
export type RedirectRefusal =
  | 'cross_registrable_domain'
  | 'scheme_downgrade'
  | 'too_many_redirects'
  | 'redirect_on_authoritative_location'
  | 'redirect_without_location'

/** What {@link decideRedirect} decided: the URL to fetch next, or why the redirect is refused. */
export type RedirectDecision =
  { readonly follow: string } | { readonly refuse: RedirectRefusal; readonly message: string }

/** One HTTP redirect answer of a discovery fetch. */
export interface RedirectStep {
  /** The URL first requested (the registrable domain every hop must keep). */
  readonly origin: string
  /** The URL that answered the redirect. */
  readonly current: string
  readonly status: number
  /** The `Location` header, or `null`. */
  readonly location: string | null
  readonly hop: DiscoveryHop
  /** Redirects already followed from `origin`. */
  readonly followed: number
}

/**
 * Decides one HTTP redirect of adagents.json or brand.json discovery (AdCP 3.1 adagents.mdx discovery; the
 * conformance vectors `adagents-discovery-redirects.json`): the `authoritative_location` fetch follows no
 * redirect; the `/.well-known/` fetch follows at most {@link MAX_DISCOVERY_REDIRECTS}, each with a usable
 * `Location`, never from https to another scheme, and never off the registrable domain (eTLD+1, Public Suffix
 * List with its PRIVATE section) of the URL first requested. Every hop must still go through an SSRF-safe fetch.
 *
 * @example
 * decideRedirect({ origin: 'https://pub.example/.well-known/adagents.json', current: 'https://pub.example/.well-known/adagents.json',
 *   status: 301, location: 'https://www.pub.example/.well-known/adagents.json', hop: 'well_known', followed: 0 })
 * // { follow: 'https://www.pub.example/.well-known/adagents.json' }
 */
export function decideRedirect(step: RedirectStep): RedirectDecision {
  const { current } = step
  if (step.hop === 'authoritative_location') {
    return {
      refuse: 'redirect_on_authoritative_location',
      message: `${current} redirected; the authoritative location may not redirect`,
    }
  }
  if (!step.location || !URL.canParse(step.location, current)) {
    return {
      refuse: 'redirect_without_location',
      message: `${current} answered ${step.status} without a usable Location`,
    }
  }
  const next = new URL(step.location, current)
  if (step.followed >= MAX_DISCOVERY_REDIRECTS) {
    return {
      refuse: 'too_many_redirects',
      message: `more than ${MAX_DISCOVERY_REDIRECTS} redirects from ${step.origin}`,
    }
  }
  if (new URL(current).protocol === 'https:' && next.protocol !== 'https:') {
    return { refuse: 'scheme_downgrade', message: `${current} redirected to ${next.protocol} (https only)` }
  }
  const anchor = registrableDomain(step.origin)
  if (registrableDomain(next.href) !== anchor) {
    return {
      refuse: 'cross_registrable_domain',
      message: `${current} redirected off ${anchor} to ${next.host}`,
    }
  }
  return { follow: next.href }
}
