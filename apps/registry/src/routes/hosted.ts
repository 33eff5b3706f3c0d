/**
 * Registry-hosted publisher domains: the bind-on-verify claim, origin verification, and the hosted files the
 * registry serves (`/hosted/{domain}/adagents.json`, `/hosted/{domain}/brand.json`, outside the API document).
 *
 * Flow: an organization claims a domain (a token inside a claim-specific `authoritative_location`), places that
 * pointer at its origin's `/.well-known/adagents.json`, and anyone authenticated triggers verify-origin. The
 * registry fetches the origin file (SSRF-safe, no redirect) and, when it points at the hosted URL, marks the
 * domain origin-verified and binds it to the organization of the token it carries; an owner is never replaced.
 */
import { randomBytes } from 'node:crypto'
import { Hono } from 'hono'
import { compact } from '../db/json.js'
import {
  CLAIM_PARAM,
  hostedAdagentsDocument,
  hostedAdagentsUrl,
  isRegistryHosted,
  readOriginPointer,
} from '../domain/hosted.js'
import { normalizeDomain } from '../domain/names.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, reply, requireOrg, requirePrincipal } from './http.js'

/** How long a claim token stays usable, days. */
export const CLAIM_TTL_DAYS = 30

const PERMANENT = new Set([
  'not_found',
  'invalid_json',
  'no_authoritative_location',
  'authoritative_location_mismatch',
  'unresolvable',
])

const pathDomain = (value: string): string => {
  const domain = normalizeDomain(value)
  if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
  return domain
}

/** The hosted-domain routes. */
export function hostedRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps

  app.post('/api/properties/hosted/:domain/claim', async (c) => {
    const orgId = requireOrg(await requirePrincipal(c, deps))
    const domain = pathDomain(c.req.param('domain'))
    const hosted = await repository.hosting.getHostedDomain(domain)
    if (hosted?.owner_org_id && hosted.owner_org_id !== orgId && hosted.origin_verified_at)
      throw new HttpError(409, 'domain_locked', `${domain} is verified and bound to another organization`, {
        domain,
      })
    const token = randomBytes(24).toString('base64url')
    await repository.hosting.createClaim({
      token,
      domain,
      org_id: orgId,
      created_at: new Date(deps.now()).toISOString(),
    })
    const location = `${hostedAdagentsUrl(deps.publicUrl(c), domain)}?${CLAIM_PARAM}=${token}`
    return reply(c, deps, 'claimHostedPropertyDomain', {
      success: true,
      domain,
      authoritative_location: location,
      instructions:
        `Serve {"authoritative_location": "${location}"} as https://${domain}/.well-known/adagents.json, ` +
        `then call POST /api/properties/hosted/${domain}/verify-origin. The token binds ${domain} to your ` +
        `organization when verification succeeds; it expires after ${CLAIM_TTL_DAYS} days.`,
    })
  })

  app.post('/api/properties/hosted/:domain/verify-origin', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const domain = pathDomain(c.req.param('domain'))
    const publisher = await repository.publishers.getPublisher(domain)
    const hosted = await repository.hosting.getHostedDomain(domain)
    if (!isRegistryHosted(publisher))
      throw new HttpError(404, 'hosted_property_not_found', `the registry hosts no property for ${domain}`, {
        domain,
      })
    const hostedUrl = hostedAdagentsUrl(deps.publicUrl(c), domain)
    const probe = await deps.crawler.probe(`${deps.crawler.originFor(domain)}/.well-known/adagents.json`)
    const reading = readOriginPointer(probe, hostedUrl)
    const now = deps.now()
    const at = new Date(now).toISOString()
    const verified = reading.reason === 'authoritative_location_pointer'
    const effect = verified ? 'verified' : PERMANENT.has(reading.reason) ? 'demoted' : 'unchanged'
    await repository.hosting.recordCheck(domain, {
      at,
      reason: reading.reason,
      detail: reading.detail,
      effect,
    })

    let boundOrg: string | undefined
    let detail = reading.detail
    if (verified && reading.claimToken) {
      const claim = await repository.hosting.getClaim(
        reading.claimToken,
        new Date(now - CLAIM_TTL_DAYS * 86_400_000).toISOString(),
      )
      if (!claim || claim.domain !== domain) {
        detail = `${detail}; the claim token is unknown, expired or for another domain: nothing was bound`
      } else {
        const owner = await repository.hosting.bindOwner(domain, claim.org_id, at)
        if (owner === claim.org_id) boundOrg = owner
        else detail = `${detail}; ${domain} already has a verified owner, which is kept`
      }
    } else if (verified && hosted?.owner_org_id) {
      detail = `${detail}; the pointer carries no claim token: the existing owner is kept`
    }

    const events =
      effect === 'verified'
        ? await repository.publishers.setHostedSource(
            domain,
            'hosted',
            { resolved_url: hostedUrl, reason: 'origin points at the hosted adagents.json' },
            principal.id,
            now,
          )
        : effect === 'demoted'
          ? await repository.publishers.setHostedSource(
              domain,
              'community',
              { reason: `origin verification failed: ${reading.reason}` },
              principal.id,
              now,
            )
          : []
    if (events.length > 0) deps.hub.notify()
    return reply(
      c,
      deps,
      'verifyHostedPropertyOrigin',
      compact({ verified, reason: reading.reason, checked_at: at, detail, bound_org_id: boundOrg }),
    )
  })

  app.get('/hosted/:domain/adagents.json', async (c) => {
    const domain = normalizeDomain(c.req.param('domain'))
    const publisher = domain ? await repository.publishers.getPublisher(domain) : undefined
    if (!domain || !publisher || !isRegistryHosted(publisher))
      throw new HttpError(
        404,
        'not_found',
        `the registry hosts no adagents.json for ${c.req.param('domain')}`,
      )
    const properties = await repository.publishers.getProperties(domain)
    c.header('Cache-Control', 'public, max-age=300')
    return c.json(hostedAdagentsDocument(publisher, properties))
  })

  app.get('/hosted/:domain/brand.json', async (c) => {
    const domain = normalizeDomain(c.req.param('domain'))
    const brand = domain ? await repository.brands.getBrand(domain) : undefined
    if (!brand || brand.source !== 'hosted' || !brand.document)
      throw new HttpError(404, 'not_found', `the registry hosts no brand.json for ${c.req.param('domain')}`)
    c.header('Cache-Control', 'public, max-age=300')
    return c.json(brand.document)
  })

  return app
}
