/**
 * The creative agent's HTTP surface, built from its dependencies and nothing else: MCP at /mcp, A2A at /a2a and
 * the agent cards (the @adwire/agent-server task server), preview pages at /previews/{id} (from the cache or the
 * database), generated audio at
 * /generated/audio/{name}, the operator's
 * brand.json and the signing JWKS under /.well-known, and /health.
 */
import { Hono } from 'hono'
import { parseAudioName, renderWav } from './creative/audio.js'
import type { CreativeAgentDeps } from './deps.js'
import { adcpErrorResponse } from './http-errors.js'
import type { PreviewLookup } from './previews.js'

const AGENT_ROUTES = [
  '/mcp',
  '/a2a',
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/a2a/.well-known/agent-card.json',
  '/a2a/.well-known/agent.json',
] as const

/**
 * Preview pages hold buyer-supplied markup: served in a CSP sandbox (an opaque origin, no scripts), so nothing
 * in them can reach this origin's endpoints.
 */
const PREVIEW_CSP = [
  'sandbox allow-popups allow-popups-to-escape-sandbox',
  "default-src 'none'",
  'img-src data: https: http:',
  'media-src data: https: http:',
  "style-src 'unsafe-inline'",
  'font-src data: https:',
].join('; ')

/** The brand.json `agents[]` entries: the agent's base URL and its two endpoints, all on one JWKS. */
export function brandJson(publicUrl: string, lastUpdated: string): Record<string, unknown> {
  const jwksUri = `${publicUrl}/.well-known/jwks.json`
  const entry = (url: string, id: string, description: string) => ({
    type: 'creative',
    url,
    id,
    description,
    jwks_uri: jwksUri,
  })
  return {
    version: '1.0',
    agents: [
      entry(
        publicUrl,
        'adwire_creative_agent',
        'adwire creative agent (AdCP 3.1): formats, builds, previews',
      ),
      entry(`${publicUrl}/mcp`, 'adwire_creative_agent_mcp', 'the creative agent over MCP (streamable HTTP)'),
      entry(`${publicUrl}/a2a`, 'adwire_creative_agent_a2a', 'the creative agent over A2A (JSON-RPC)'),
    ],
    last_updated: lastUpdated,
  }
}

/** The request as the task server must see it: under the public URL (whose path may carry a prefix). */
function asPublic(request: Request, publicUrl: string): Request {
  const received = new URL(request.url)
  const target = `${publicUrl}${received.pathname}${received.search}`
  if (target === request.url) return request
  return new Request(target, {
    method: request.method,
    headers: request.headers,
    ...(request.body ? { body: request.body, duplex: 'half' } : {}),
  } as RequestInit)
}

/**
 * @example
 * const runtime = await openDeps(env, 'http://127.0.0.1:4200')
 * serve({ fetch: createApp(runtime.deps).fetch, port: 4200 })
 */
export function createApp(deps: CreativeAgentDeps): Hono {
  const app = new Hono()
  const brand = JSON.stringify(brandJson(deps.publicUrl, new Date().toISOString()))
  const jwks = JSON.stringify(deps.keys.jwks)

  app.use('*', async (c, next) => {
    await next()
    c.header('x-content-type-options', 'nosniff')
    c.header('referrer-policy', 'no-referrer')
  })

  app.get('/health', async (c) => {
    try {
      await deps.storage.ping()
      return c.json({ status: 'ok', database: deps.storage.kind })
    } catch {
      return c.json({ status: 'unavailable', database: deps.storage.kind }, 503)
    }
  })

  for (const path of AGENT_ROUTES) app.all(path, (c) => deps.agent.fetch(asPublic(c.req.raw, deps.publicUrl)))

  app.get('/previews/:id', async (c) => {
    let found: PreviewLookup
    try {
      found = await deps.previews.lookup(c.req.param('id'), deps.clock())
    } catch (error) {
      deps.log({ preview: 'lookup failed', error: String(error) })
      return adcpErrorResponse('SERVICE_UNAVAILABLE', 'the preview store is unavailable; retry shortly', {
        retryAfter: 5,
      })
    }
    if (found.state === 'unknown')
      return adcpErrorResponse('REFERENCE_NOT_FOUND', 'no preview with this id', { status: 404 })
    if (found.state === 'expired')
      return adcpErrorResponse(
        'REFERENCE_NOT_FOUND',
        `this preview expired at ${found.expiredAt.toISOString()}`,
        { status: 410, details: { expired_at: found.expiredAt.toISOString() } },
      )
    const { preview } = found
    return c.html(preview.html, 200, {
      'content-security-policy': PREVIEW_CSP,
      'cache-control': `private, max-age=${Math.max(0, Math.floor((preview.expiresAt.getTime() - deps.clock().getTime()) / 1000))}`,
      expires: preview.expiresAt.toUTCString(),
    })
  })

  // Audio rendered by build_creative, addressed by content (seed and duration): rendered again on each request.
  app.get('/generated/audio/:name', (c) => {
    const named = parseAudioName(c.req.param('name'))
    if (!named)
      return adcpErrorResponse('REFERENCE_NOT_FOUND', 'no generated audio with this name', { status: 404 })
    return c.body(new Uint8Array(renderWav(named.seed, named.durationMs)), 200, {
      'content-type': 'audio/wav',
      'cache-control': 'public, max-age=31536000, immutable',
    })
  })

  app.get('/.well-known/brand.json', (c) =>
    c.body(brand, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }),
  )
  app.get('/.well-known/jwks.json', (c) =>
    c.body(jwks, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }),
  )

  app.notFound((c) =>
    adcpErrorResponse('REFERENCE_NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`, { status: 404 }),
  )
  app.onError((error, c) => {
    deps.log({ error: 'unhandled', path: c.req.path, message: error.message })
    return adcpErrorResponse('INTERNAL_ERROR', 'the agent failed to answer; see its log')
  })
  return app
}
