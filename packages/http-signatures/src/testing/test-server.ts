/**
 * Test helper (not exported by the package): a real `node:http` server on 127.0.0.1 with an ephemeral port,
 * routes by path, and counters of requests and connections.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignatureError } from '../errors.js'
import { createSafeFetch, type SafeFetchOptions } from '../keys/safe-fetch.js'

export type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly port: number
  /** Replaces or adds the route of a path. */
  route(path: string, handler: Route): void
  /** Requests seen for a path. */
  hits(path: string): number
  /** The requests seen, in order. */
  readonly requests: http.IncomingMessage[]
  /** TCP connections accepted. */
  connections(): number
  close(): Promise<void>
}

export async function startServer(routes: Record<string, Route> = {}): Promise<TestServer> {
  const table = new Map(Object.entries(routes))
  const counts = new Map<string, number>()
  const requests: http.IncomingMessage[] = []
  let connections = 0
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname
    counts.set(path, (counts.get(path) ?? 0) + 1)
    requests.push(request)
    const handler = table.get(path)
    if (handler) handler(request, response)
    else response.writeHead(404).end()
  })
  server.on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    route: (path, handler) => void table.set(path, handler),
    hits: (path) => counts.get(path) ?? 0,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A route answering JSON (a value, or raw text to send as is). */
export function json(value: unknown, headers: Record<string, string> = {}, status = 200): Route {
  return (_request, response) => {
    const body = typeof value === 'string' ? value : JSON.stringify(value)
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body)
  }
}

/** A route whose answer is computed per request (so tests can change documents between fetches). */
export function dynamic(produce: () => unknown, headers: Record<string, string> = {}): Route {
  return (request, response) => json(produce(), headers)(request, response)
}

/** A fetch for tests: http allowed, loopback allowed, every host name resolving to 127.0.0.1, short caps. */
export function testFetch(options: SafeFetchOptions = {}) {
  return createSafeFetch({
    allowHttp: true,
    allowLoopback: true,
    lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    ...options,
  })
}

/** A mutable clock, Unix seconds. */
export function testClock(start = 1_776_520_800) {
  let value = start
  return {
    now: () => value,
    set: (seconds: number) => void (value = seconds),
    advance: (seconds: number) => void (value += seconds),
  }
}

/** A JWK shaped as AdCP publishes signing keys (the material is a fixed, valid Ed25519 public key). */
export function fakeKey(kid: string) {
  return {
    kid,
    kty: 'OKP',
    crv: 'Ed25519',
    x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
    alg: 'EdDSA',
    use: 'sig',
    key_ops: ['verify'],
    adcp_use: 'request-signing',
  }
}

/** Awaits a promise expected to reject with a {@link SignatureError} and returns it. */
export async function failure(promise: Promise<unknown>): Promise<SignatureError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!SignatureError.is(error)) throw new Error(`expected a SignatureError, got ${String(error)}`)
  return error
}
