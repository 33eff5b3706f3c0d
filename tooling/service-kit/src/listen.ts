/**
 * Listening and graceful closing for every adwire service: one @hono/node-server socket on `127.0.0.1` unless a
 * host is named, the address it actually bound, and a drain that lets in-flight requests finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { serve } from '@hono/node-server'
import { answerEarly, readGuarded, type Refusal } from './request-guard.js'
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
  /**
   * Open sockets at most from one client address (`::ffff:` IPv4 addresses counted as IPv4); its sockets beyond
   * are closed as soon as they are accepted, so one client cannot take the whole `maxConnections` budget.
   */
  readonly maxConnectionsPerClient: number
  /** Largest request body, bytes, chunked or not: a larger one is answered 413 without being buffered. */
  readonly maxBodyBytes: number
  /** Deepest nesting of arrays and objects in a JSON request body: a deeper one is answered 400. */
  readonly maxJsonDepth: number
}

/**
 * The defaults: headers within 10 s, a whole request (a 1 MiB webhook at 35 KB/s) within 30 s, idle
 * keep-alive sockets closed after 5 s, and at most 768 sockets, which leaves a quarter of the common
 * 1,024-descriptor limit for the database, key fetches and outbound calls (raise both together); at most 128
 * of them from one address (raise it behind a proxy that connects from one address); bodies of at most
 * 1 MiB; JSON nested at most 64 levels.
 */
export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 768,
  maxConnectionsPerClient: 128,
  maxBodyBytes: 1_048_576,
  maxJsonDepth: 64,
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
  /**
   * The answer to a request refused before any route saw it (a body beyond `maxBodyBytes`, JSON deeper than
   * `maxJsonDepth` or with a lone surrogate), in the service's own error shape. Default:
   * `{ "error": code, "message": … }` with the refusal's status.
   */
  readonly refuse?: (refusal: Refusal) => Response
  /**
   * Where a request event the routes never see is logged, one object a line: `{ event: 'client_abort' }` for
   * a client that went away before the end of its body. Default: a JSON line on stdout.
   */
  readonly log?: (entry: Record<string, unknown>) => void
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
        createServer: guarded({
          limits,
          ...(options.intercept ? { intercept: options.intercept } : {}),
          refuse: options.refuse ?? defaultRefusal,
          log:
            options.log ??
            ((entry) =>
              process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`)),
        }),
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
    capPerClient(created, limits.maxConnectionsPerClient)
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

const defaultRefusal = (refusal: Refusal) =>
  Response.json({ error: refusal.code, message: refusal.message }, { status: refusal.status })

/**
 * A `createServer` for @hono/node-server that offers each request to `intercept` first, then reads the body
 * under the limits (see `request-guard.ts`) and hands it to the Hono listener as `rawBody`, which
 * @hono/node-server uses as the web `Request`'s body; a refused request is answered with `refuse`, an aborted
 * one logged and dropped.
 */
function guarded(options: {
  limits: HttpLimits
  intercept?: NonNullable<ListenOptions['intercept']>
  refuse: (refusal: Refusal) => Response
  log: (entry: Record<string, unknown>) => void
}): typeof createServer {
  const { limits, intercept, refuse, log } = options
  return ((
    serverOptions: Parameters<typeof createServer>[0],
    listener: (req: IncomingMessage, res: ServerResponse) => void,
  ) =>
    createServer(serverOptions, (request, response) => {
      if (intercept?.(request, response)) return
      void readGuarded(request, limits.maxBodyBytes, limits.maxJsonDepth).then(async (outcome) => {
        if (outcome.kind === 'body') {
          if (outcome.body) (request as IncomingMessage & { rawBody?: Buffer }).rawBody = outcome.body
          listener(request, response)
        } else if (outcome.kind === 'aborted') {
          log({
            event: 'client_abort',
            method: request.method,
            path: (request.url ?? '').split('?')[0],
            received_bytes: outcome.received,
          })
          if (!response.headersSent) response.destroy()
        } else {
          const answer = refuse(outcome.refusal)
          const headers: Record<string, string> = {}
          answer.headers.forEach((value, name) => (headers[name] = value))
          const body = new Uint8Array(await answer.arrayBuffer())
          if (!response.headersSent && !response.destroyed)
            answerEarly(request, response, answer.status, headers, body)
        }
      })
    })) as typeof createServer
}

/** Closes a client's sockets beyond `max` open at once (by remote address) as soon as they are accepted. */
function capPerClient(server: Server, max: number): void {
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = (socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '')
    const count = (open.get(address) ?? 0) + 1
    if (count > max) {
      socket.destroy()
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
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
