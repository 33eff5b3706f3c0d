/**
 * Listening and graceful closing for every adwire service: one @hono/node-server socket on `127.0.0.1` unless a
 * host is named, the address it actually bound, and a drain that lets in-flight requests finish.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'

/** The interface a service binds when `HOST` is unset: loopback only (`HOST=0.0.0.0` exposes it). */
export const DEFAULT_HOST = '127.0.0.1'

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
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      { fetch: (request, env) => handler(request, env), port: options.port, hostname },
      () => resolve(created as Server),
    ) as Server
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
