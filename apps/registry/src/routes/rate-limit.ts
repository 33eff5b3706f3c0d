/**
 * Rate limits of the operations the document declares 429 for: a token bucket per (class, caller), the caller
 * being the organization of a valid bearer credential or else the client's IP address (the socket's; a proxy in
 * front shares one bucket). A bucket holds one minute's budget and refills continuously; a refusal is the
 * document's `RateLimitError` (`{ error: "rate_limited", message, retryAfter }`, with `retry_after` too, which
 * the crawl operations' 429 schema names) and a `Retry-After` header.
 */
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context, MiddlewareHandler } from 'hono'
import type { RegistryDeps } from '../deps.js'
import type { RateLimits } from '../env.js'
import { HttpError, principalOf } from './http.js'

export type RateLimitClass = keyof RateLimits

/** Which class each rate-limited route belongs to (method, Hono path). */
export const RATE_LIMITED_ROUTES: ReadonlyArray<readonly [string, string, RateLimitClass]> = [
  ['GET', '/api/brands/resolve', 'read'],
  ['POST', '/api/brands/resolve/bulk', 'read'],
  ['GET', '/api/brands/brand-json', 'read'],
  ['POST', '/api/properties/resolve/bulk', 'read'],
  ['POST', '/api/brands/save', 'write'],
  ['POST', '/api/properties/save', 'write'],
  ['POST', '/api/me/agents', 'write'],
  ['POST', '/api/organizations', 'write'],
  ['POST', '/api/registry/crawl-request', 'crawl'],
  ['POST', '/api/registry/publisher/:domain/adagents/revalidate', 'crawl'],
  ['GET', '/api/registry/mirror-proposals', 'read'],
  ['GET', '/api/registry/mirror-proposals/:id', 'read'],
  ['POST', '/api/registry/mirror-proposals/:id/approve', 'write'],
  ['POST', '/api/registry/mirror-proposals/:id/reject', 'write'],
  ['GET', '/api/registry/mirrors', 'read'],
  ['GET', '/api/registry/mirrors/:platform', 'read'],
  ['PUT', '/api/registry/mirrors/:platform', 'write'],
  ['DELETE', '/api/registry/mirrors/:platform', 'write'],
  ['POST', '/api/policies/resolve/bulk', 'read'],
  ['POST', '/api/policies/save', 'write'],
  ['POST', '/api/registry/agents/:encodedUrl/refresh', 'crawl'],
  ['POST', '/api/registry/agents/:encodedUrl/monitoring/requeue', 'write'],
  // Agent probing: live outbound connections, like crawls.
  ['GET', '/api/public/agent-formats', 'crawl'],
  ['GET', '/api/public/agent-products', 'crawl'],
  ['GET', '/api/public/agent-publishers', 'crawl'],
  ['GET', '/api/registry/agents/:encodedUrl/applicable-storyboards', 'crawl'],
  ['POST', '/api/registry/brand-crawl-request', 'crawl'],
  ['POST', '/api/registry/brand/:domain/force-crawl', 'crawl'],
  ['POST', '/api/registry/manager-revalidation-request', 'crawl'],
  // Fetches the agent's control file (auth/authorize.ts).
  ['POST', '/api/registry/agents/:encodedUrl/control/verify', 'crawl'],
]

interface Bucket {
  tokens: number
  at: number
}

/** At most this many callers are tracked; beyond it, full buckets are forgotten first. */
const MAX_BUCKETS = 50_000

/** The limiter of one registry instance. */
export function createRateLimiter(deps: RegistryDeps, limits: RateLimits) {
  const buckets = new Map<string, Bucket>()

  const callerOf = async (c: Context): Promise<string> => {
    if (c.req.header('authorization')) {
      const principal = await principalOf(c, deps)
      const org = principal?.orgId ?? (principal?.kind === 'org' ? principal.id : undefined)
      if (org) return `org:${org}`
      if (principal) return `user:${principal.id}`
    }
    try {
      return `ip:${getConnInfo(c).remote.address ?? 'unknown'}`
    } catch {
      return 'ip:unknown' // answered in process (app.request), no socket
    }
  }

  const prune = (now: number) => {
    for (const [key, bucket] of buckets) {
      const perMinute = limits[key.split('|')[0] as RateLimitClass]
      if (bucket.tokens + ((now - bucket.at) / 60_000) * perMinute >= perMinute) buckets.delete(key)
    }
  }

  return (kind: RateLimitClass): MiddlewareHandler =>
    async (c, next) => {
      const perMinute = limits[kind]
      if (perMinute <= 0) return next()
      const key = `${kind}|${await callerOf(c)}`
      const now = deps.now()
      const bucket = buckets.get(key) ?? { tokens: perMinute, at: now }
      bucket.tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.at) / 60_000) * perMinute)
      bucket.at = now
      if (bucket.tokens < 1) {
        buckets.set(key, bucket)
        const retryAfter = Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / perMinute))
        throw new HttpError(
          429,
          'rate_limited',
          `more than ${perMinute} ${kind} requests a minute; retry in ${retryAfter} s`,
          { retryAfter, retry_after: retryAfter },
          { 'Retry-After': String(retryAfter) },
        )
      }
      bucket.tokens -= 1
      if (!buckets.has(key) && buckets.size >= MAX_BUCKETS) prune(now)
      buckets.set(key, bucket)
      return next()
    }
}
