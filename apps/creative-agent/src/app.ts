/**
 * The creative agent's HTTP surface, built from its dependencies and nothing else: the agent host of
 * @adwire/agent-server (MCP at /mcp, A2A at /a2a and the agent cards, the operator's brand.json and the signing
 * JWKS under /.well-known, /health, the `{ adcp_error }` body) with the agent's own routes: preview pages at
 * /previews/{id} (from the cache or the database) and generated audio at /generated/audio/{name}.
 */
import { adcpErrorResponse, createAgentHttp, type AgentHttp } from '@adwire/agent-server/host'
import { parseAudioName, renderWav } from './creative/audio.js'
import type { CreativeAgentDeps } from './deps.js'
import type { PreviewLookup } from './previews.js'

/** The creative agent in brand.json (`agents[]` for its base URL, /mcp and /a2a, all on one JWKS). */
export const BRAND = {
  type: 'creative',
  id: 'adwire_creative_agent',
  description: 'adwire creative agent (AdCP 3.1): formats, builds, previews',
  name: 'the creative agent',
} as const

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

const PREVIEW = /^\/previews\/([^/]+)$/
const AUDIO = /^\/generated\/audio\/([^/]+)$/

/** A path segment decoded (as it came when it is not valid percent-encoding). */
function segment(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

async function preview(deps: CreativeAgentDeps, id: string): Promise<Response> {
  let found: PreviewLookup
  try {
    found = await deps.previews.lookup(id, deps.clock())
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
  const { preview: page } = found
  const maxAge = Math.max(0, Math.floor((page.expiresAt.getTime() - deps.clock().getTime()) / 1000))
  return new Response(page.html, {
    headers: {
      'content-type': 'text/html; charset=UTF-8',
      'content-security-policy': PREVIEW_CSP,
      'cache-control': `private, max-age=${maxAge}`,
      expires: page.expiresAt.toUTCString(),
    },
  })
}

/** Audio rendered by build_creative, addressed by content (seed and duration): rendered again on each request. */
function audio(name: string): Response {
  const named = parseAudioName(name)
  if (!named)
    return adcpErrorResponse('REFERENCE_NOT_FOUND', 'no generated audio with this name', { status: 404 })
  return new Response(new Uint8Array(renderWav(named.seed, named.durationMs)), {
    headers: { 'content-type': 'audio/wav', 'cache-control': 'public, max-age=31536000, immutable' },
  })
}

/**
 * @example
 * const runtime = await openDeps(env, 'http://127.0.0.1:4200')
 * listen({ port: 4200, fetch: createApp(runtime.deps).fetch })
 */
export function createApp(deps: CreativeAgentDeps): AgentHttp {
  return createAgentHttp({
    publicUrl: deps.publicUrl,
    agent: deps.agent,
    brand: BRAND,
    jwks: deps.keys.jwks,
    health: deps.storage,
    log: deps.log,
    ...(deps.maxBodyBytes ? { maxBodyBytes: deps.maxBodyBytes } : {}),
    routes(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
      const path = new URL(request.url).pathname
      const page = PREVIEW.exec(path)
      if (page) return preview(deps, segment(page[1]!))
      const sound = AUDIO.exec(path)
      return sound ? audio(segment(sound[1]!)) : undefined
    },
  })
}
