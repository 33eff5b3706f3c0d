/**
 * The HTTP surface every AdCP agent host serves around its task server: MCP at /mcp, A2A at /a2a and the agent
 * cards (seen by the task server under the public URL, whose path may carry a prefix, with bodies capped),
 * the operator's brand.json and the signing JWKS under /.well-known, /health from the database, the app's own
 * routes, and one error body ({@link adcpErrorResponse}) for unknown routes and failures. Framework-free: a
 * web-standard `fetch`.
 */
import { refusedRequest } from '../request-refusal.js'
import { adcpErrorResponse } from './answers.js'
import { brandJson, type BrandIdentity } from './brand.js'

/** The paths the task server answers. */
const AGENT_ROUTES = new Set([
  '/mcp',
  '/a2a',
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/a2a/.well-known/agent-card.json',
  '/a2a/.well-known/agent.json',
])

/** The default cap on a body sent to /mcp and /a2a, bytes (the service-kit default too). */
export const MAX_AGENT_BODY_BYTES = 1_048_576

export interface AgentHttpOptions {
  /** The agent's public base URL, no trailing slash. */
  readonly publicUrl: string
  /** The task server (`createAgentServer`), or anything answering its routes. */
  readonly agent: { fetch(request: Request): Response | Promise<Response> }
  /** The agent in brand.json. */
  readonly brand: BrandIdentity
  /** The JWKS served at /.well-known/jwks.json (`SigningKeys.jwks`). */
  readonly jwks: object
  /** The database /health reports: its kind and a check that it answers (the app's storage). */
  readonly health: { readonly kind: string; ping(): Promise<void> }
  /** The app's own routes: an answer, or undefined when the request is not one of them. */
  readonly routes?: (request: Request) => Response | undefined | Promise<Response | undefined>
  /** The largest body accepted on the task server's routes, bytes. Default {@link MAX_AGENT_BODY_BYTES}. */
  readonly maxBodyBytes?: number
  /** Where an unhandled failure is logged (`{ error: 'unhandled', path, message }`). */
  readonly log?: (entry: Record<string, unknown>) => void
}

/** The host's HTTP handler. */
export interface AgentHttp {
  /** Answers one request (the service-kit listener's handler). */
  fetch(request: Request): Promise<Response>
  /** Answers a path (resolved against `http://localhost`) or a request: for tests. */
  request(input: string | Request, init?: RequestInit): Promise<Response>
}

/** The request as the task server must see it: under the public URL (whose path may carry a prefix). */
function asPublic(request: Request, publicUrl: string, pathname: string, search: string): Request {
  const target = `${publicUrl}${pathname}${search}`
  if (target === request.url) return request
  return new Request(target, {
    method: request.method,
    headers: request.headers,
    ...(request.body ? { body: request.body, duplex: 'half' } : {}),
  } as RequestInit)
}

const tooLarge = (max: number) =>
  refusedRequest({ status: 413, code: 'payload_too_large', message: `request body over ${max} bytes` })

/** The request with its body read under the cap, or the 413 answer. */
async function capped(request: Request, max: number): Promise<Request | Response> {
  const declared = request.headers.get('content-length')
  if (declared !== null) return Number(declared) > max ? tooLarge(max) : request
  if (!request.body) return request
  // Chunked: read it with the cap, then pass the bytes on.
  const bytes = new Uint8Array(await request.arrayBuffer())
  if (bytes.byteLength > max) return tooLarge(max)
  return new Request(request.url, { method: request.method, headers: request.headers, body: bytes })
}

/** `nosniff` and `no-referrer` on every answer (a copy when the answer's headers are immutable). */
function secured(response: Response): Response {
  let answer = response
  try {
    answer.headers.set('x-content-type-options', 'nosniff')
  } catch {
    answer = new Response(response.body, response)
    answer.headers.set('x-content-type-options', 'nosniff')
  }
  answer.headers.set('referrer-policy', 'no-referrer')
  return answer
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD'

/**
 * Builds the handler. brand.json and the JWKS are rendered once (brand.json's `last_updated` is the build
 * time) and cached by clients for five minutes.
 *
 * @example
 * const http = createAgentHttp({
 *   publicUrl, agent, jwks: keys.jwks, health: storage, log,
 *   brand: { type: 'sales', id: 'adwire_sales_agent', description: 'adwire sales agent', name: 'the sales agent' },
 * })
 * listener.handle(http.fetch)
 */
export function createAgentHttp(options: AgentHttpOptions): AgentHttp {
  const max = options.maxBodyBytes ?? MAX_AGENT_BODY_BYTES
  const log = options.log ?? (() => {})
  const published = (text: string) => () =>
    new Response(text, {
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
    })
  const documents = new Map<string, () => Response>([
    [
      '/.well-known/brand.json',
      published(JSON.stringify(brandJson(options.publicUrl, options.brand, new Date().toISOString()))),
    ],
    ['/.well-known/jwks.json', published(JSON.stringify(options.jwks))],
  ])

  async function health(): Promise<Response> {
    const database = options.health.kind
    try {
      await options.health.ping()
      return Response.json({ status: 'ok', database })
    } catch {
      return Response.json({ status: 'unavailable', database }, { status: 503 })
    }
  }

  async function route(request: Request, pathname: string, search: string): Promise<Response> {
    if (AGENT_ROUTES.has(pathname)) {
      const checked = await capped(request, max)
      if (checked instanceof Response) return checked
      return options.agent.fetch(asPublic(checked, options.publicUrl, pathname, search))
    }
    const document = documents.get(pathname)
    if (document && isRead(request.method)) return document()
    if (pathname === '/health' && isRead(request.method)) return health()
    const own = await options.routes?.(request)
    if (own) return own
    return adcpErrorResponse('REFERENCE_NOT_FOUND', `no route for ${request.method} ${pathname}`, {
      status: 404,
    })
  }

  async function fetch(request: Request): Promise<Response> {
    const { pathname, search } = new URL(request.url)
    let answer: Response
    try {
      answer = await route(request, pathname, search)
    } catch (error) {
      log({ error: 'unhandled', path: pathname, message: (error as Error)?.message ?? String(error) })
      answer = adcpErrorResponse('INTERNAL_ERROR', 'the agent failed to answer; see its log')
    }
    if (request.method === 'HEAD' && answer.body) answer = new Response(null, answer)
    return secured(answer)
  }

  return {
    fetch,
    request: (input, init) =>
      fetch(typeof input === 'string' ? new Request(new URL(input, 'http://localhost'), init) : input),
  }
}
