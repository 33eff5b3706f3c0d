/**
 * Listening and graceful closing for every adwire service: one @hono/node-server socket on `127.0.0.1` unless a
 * host is named, the address it actually bound, and a drain that lets in-flight requests finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { withJsonNewline } from './json-newline.js'

/** The interface a service binds when `HOST` is unset: loopback only (`HOST=0.0.0.0` exposes it). */
export const DEFAULT_HOST = '127.0.0.1'

/**
 * Limits on the HTTP server, so that slow or idle clients cannot hold sockets (and file descriptors) for
 * minutes and starve everyone else. Node checks the two request timeouts on a periodic sweep, so a stalled
 * request is cut at most about one second after its timeout.
 */
export interface HttpLimits {
  /** Time to receive a request's headers, ms (`server.headersTimeout`). Not above `requestTimeoutMs`. */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, headers and body, ms (`server.requestTimeout`). */
  readonly requestTimeoutMs: number
  /** How long an idle keep-alive socket stays open between requests, ms (`server.keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number
  /** Open sockets at most; sockets beyond are closed as soon as they are accepted (`server.maxConnections`). */
  readonly maxConnections: number
}

/**
 * The defaults: headers within 10 s, a whole request (a 1 MiB webhook at 35 KB/s) within 30 s, idle
 * keep-alive sockets closed after 5 s, and at most 768 sockets, which leaves a quarter of the common
 * 1,024-descriptor limit for the database, key fetches and outbound calls (raise both together).
 */
export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 768,
}

/**
 * What a service answers requests with: a web-standard handler (`app.fetch` of a Hono app). `env` is what
 * @hono/node-server passes (`{ incoming, outgoing }`: the client's socket address, for per-IP limits).
 */
export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>

export interface ListenOptions {
  /** The port; `0` picks a free one. */
  readonly port: number
  /** The interface to bind; unset or empty: {@link DEFAULT_HOST}. `0.0.0.0` or `::` bind every interface. */
  readonly host?: string | undefined
  /**
   * The handler. May be left out and set later with {@link Listener.handle} (a service that needs its own URL
   * before it can build its app); until then every request gets `starting()`.
   */
  readonly fetch?: FetchHandler
  /** The answer while no handler is set, in the service's own error shape. Default: a bare 503. */
  readonly starting?: () => Response
  /** Timeouts and the connection cap; each one left out is its {@link DEFAULT_HTTP_LIMITS} value. */
  readonly limits?: Partial<HttpLimits>
  /**
   * A node:http handler tried before `fetch` for every request: it returns true when it took the request
   * (and answers it itself), false to leave it to `fetch`. For a hot route that should not pay for web
   * `Request` and `Response` objects (the receiver's webhook deliveries).
   */
  readonly intercept?: (request: IncomingMessage, response: ServerResponse) => boolean
}

/** A bound socket: where it listens and how to stop it. */
export interface Listener {
  readonly server: Server
  /** The port actually bound (the free one chosen for port `0`). */
  readonly port: number
  /** The address actually bound, as the socket reports it (`127.0.0.1`, `0.0.0.0`, `::`). */
  readonly address: string
  /** `http://{address}:{port}`: what the logs name (IPv6 in brackets). */
  readonly boundUrl: string
  /**
   * A URL this machine reaches the service at: `boundUrl`, except that a wildcard address (`0.0.0.0`, `::`)
   * becomes the loopback of its family. The default public URL and what the tests call.
   */
  readonly url: string
  /** Sets (or replaces) the handler. */
  handle(fetch: FetchHandler): void
  /**
   * Stops accepting, closes idle keep-alive sockets as they go idle, and after `graceMs` (default 10 s) the
   * busy ones too; resolves when the socket is closed. Idempotent. End long-lived streams right after calling
   * it: they would hold the drain up to `graceMs`.
   */
  close(graceMs?: number): Promise<void>
}

const WILDCARDS = new Set(['0.0.0.0', '::', '::0'])

const urlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`

/**
 * Binds `options.host` (default `127.0.0.1`) and `options.port` with @hono/node-server and resolves once the
 * socket listens; rejects when it cannot bind (port taken, unknown address).
 *
 * @example
 * const listener = await listen({ port: 0, fetch: app.fetch })
 * console.log(`listening on ${listener.boundUrl}`) // http://127.0.0.1:54321
 * await listener.close()
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const starting = options.starting ?? (() => new Response(null, { status: 503 }))
  let handler: FetchHandler = options.fetch ?? (() => starting())
  const hostname = options.host?.trim() || DEFAULT_HOST
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits }
  const problem = limitsProblem(limits)
  if (problem) throw new RangeError(`listen: ${problem}`)
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      {
        // Every JSON answer ends with a newline, whichever route, error handler or SDK produced it.
        fetch: async (request, env) => withJsonNewline(await handler(request, env)),
        port: options.port,
        hostname,
        ...(options.intercept ? { createServer: intercepting(options.intercept) } : {}),
        serverOptions: {
          headersTimeout: limits.headersTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          // How often Node sweeps for requests past their timeout (its default is 30 s).
          connectionsCheckingInterval: Math.max(
            10,
            Math.min(1_000, limits.headersTimeoutMs, limits.requestTimeoutMs),
          ),
        },
      },
      () => resolve(created as Server),
    ) as Server
    created.keepAliveTimeout = limits.keepAliveTimeoutMs
    created.maxConnections = limits.maxConnections
    created.once('error', reject)
  })
  const bound = server.address() as AddressInfo
  const local = WILDCARDS.has(bound.address) ? (bound.family === 'IPv6' ? '::1' : '127.0.0.1') : bound.address
  let closing: Promise<void> | undefined
  return {
    server,
    port: bound.port,
    address: bound.address,
    boundUrl: urlOf(bound.address, bound.port),
    url: urlOf(local, bound.port),
    handle(fetch) {
      handler = fetch
    },
    close(graceMs = 10_000) {
      closing ??= drain(server, graceMs)
      return closing
    },
  }
}

/** A `createServer` for @hono/node-server that offers each request to `intercept` first. */
function intercepting(intercept: NonNullable<ListenOptions['intercept']>): typeof createServer {
  return ((
    serverOptions: Parameters<typeof createServer>[0],
    listener: (req: IncomingMessage, res: ServerResponse) => void,
  ) =>
    createServer(serverOptions, (request, response) => {
      if (!intercept(request, response)) listener(request, response)
    })) as typeof createServer
}

function limitsProblem(limits: HttpLimits): string | undefined {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) return `${name} must be a positive whole number`
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) return 'headersTimeoutMs exceeds requestTimeoutMs'
  return undefined
}

async function drain(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  // A socket whose response just ended would otherwise wait for the keep-alive timeout.
  server.closeIdleConnections()
  const idle = setInterval(() => server.closeIdleConnections(), 50)
  const force = setTimeout(() => server.closeAllConnections(), graceMs)
  try {
    await closed
  } finally {
    clearInterval(idle)
    clearTimeout(force)
  }
}

/**
 * The line a service logs once it listens: the address it bound, and the local URL when they differ.
 *
 * @example
 * describeListening(listener) // 'http://0.0.0.0:4100 (every interface; this machine: http://127.0.0.1:4100)'
 */
export function describeListening(listener: Pick<Listener, 'address' | 'boundUrl' | 'url'>): string {
  if (listener.boundUrl === listener.url) return listener.boundUrl
  const scope = WILDCARDS.has(listener.address) ? 'every interface' : listener.address
  return `${listener.boundUrl} (${scope}; this machine: ${listener.url})`
}
