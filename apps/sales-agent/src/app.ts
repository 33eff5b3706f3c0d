/**
 * The sales agent's HTTP surface, built from its dependencies and nothing else: MCP at /mcp, A2A at /a2a and the
 * agent cards (the @adwire/agent-server task server), the operator's brand.json and the webhook-signing JWKS
 * under /.well-known, and /health. Requests over 1 MiB are refused with 413 before they reach the task server.
 */
import { Hono } from 'hono'
import type { SalesAgentDeps } from './deps.js'

const AGENT_ROUTES = ['/mcp', '/a2a', '/.well-known/agent-card.json', '/.well-known/agent.json'] as const
/** The largest request body accepted on /mcp and /a2a, bytes. */
export const MAX_REQUEST_BYTES = 1_048_576

/** The brand.json `agents[]` entries: the agent's base URL and its two endpoints, all on one JWKS. */
export function brandJson(publicUrl: string, lastUpdated: string): Record<string, unknown> {
  const jwksUri = `${publicUrl}/.well-known/jwks.json`
  const entry = (url: string, id: string, description: string) => ({
    type: 'sales',
    url,
    id,
    description,
    jwks_uri: jwksUri,
  })
  return {
    version: '1.0',
    agents: [
      entry(publicUrl, 'adwire_sales_agent', 'adwire sales agent (AdCP 3.1): products, media buys, delivery'),
      entry(`${publicUrl}/mcp`, 'adwire_sales_agent_mcp', 'the sales agent over MCP (streamable HTTP)'),
      entry(`${publicUrl}/a2a`, 'adwire_sales_agent_a2a', 'the sales agent over A2A (JSON-RPC)'),
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

/** A JSON-RPC error answer for a request refused before the task server (no id: it was never parsed). */
const rpcError = (code: number, message: string, adcpCode: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message, data: { adcp_error: { code: adcpCode, message } } },
})

/**
 * @example
 * const runtime = await openDeps(env, 'http://127.0.0.1:4500')
 * serve({ fetch: createApp(runtime.deps).fetch, port: 4500 })
 */
export function createApp(deps: SalesAgentDeps): Hono {
  const app = new Hono()
  const brand = JSON.stringify(brandJson(deps.publicUrl, new Date().toISOString()))
  const jwks = JSON.stringify(deps.key.jwks)

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

  for (const path of AGENT_ROUTES)
    app.all(path, async (c) => {
      const declared = Number(c.req.header('content-length') ?? '0')
      if (declared > MAX_REQUEST_BYTES)
        return c.json(
          rpcError(-32600, `request body over ${MAX_REQUEST_BYTES} bytes`, 'INVALID_REQUEST'),
          413,
        )
      let request = c.req.raw
      if (request.body && !c.req.header('content-length')) {
        // Chunked: read it with the cap, then pass the bytes on.
        const bytes = new Uint8Array(await request.arrayBuffer())
        if (bytes.byteLength > MAX_REQUEST_BYTES)
          return c.json(
            rpcError(-32600, `request body over ${MAX_REQUEST_BYTES} bytes`, 'INVALID_REQUEST'),
            413,
          )
        request = new Request(request.url, { method: request.method, headers: request.headers, body: bytes })
      }
      return deps.agent.fetch(asPublic(request, deps.publicUrl))
    })

  app.get('/.well-known/brand.json', (c) =>
    c.body(brand, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }),
  )
  app.get('/.well-known/jwks.json', (c) =>
    c.body(jwks, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }),
  )

  app.notFound((c) =>
    c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404),
  )
  app.onError((error, c) => {
    deps.log({ error: 'unhandled', path: c.req.path, message: error.message })
    return c.json({ error: 'internal_error', message: 'the agent failed to answer; see its log' }, 500)
  })
  return app
}
