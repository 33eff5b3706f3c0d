/**
 * The runner's `fetch` for everything it sends to an agent: credentials, a size cap on every response body,
 * redirects followed by hand (at most 5) and refused when they lead to a loopback, private or link-local
 * address unless the agent itself is local, and a record of the last HTTP status and headers for the
 * `http_status` family of checks.
 */
import { capResponseSize } from '@adwire/agent-client'
import { checkAddress } from '@adwire/http-signatures'
import { StoryboardError } from './errors.js'

/** Credentials sent with every request of a caller. */
export type Credentials =
  { type: 'bearer'; token: string } | { type: 'basic'; username: string; password: string } | { type: 'none' }

/** The HTTP exchange behind the last task call, for `http_status`, `http_status_in`, `on_401_require_header`. */
export interface HttpObservation {
  status: number
  headers: Record<string, string>
}

/** Options of {@link createRunnerFetch}. */
export interface RunnerFetchOptions {
  credentials: Credentials
  /** The agent URL: decides whether redirects to local addresses are allowed. */
  agentUrl: string
  /** Largest response body, bytes. */
  maxResponseBytes: number
  /** URLs the agent advertises on `publicOrigin` are fetched from `localOrigin` (like a hosts-file entry). */
  route?: { publicOrigin: string; localOrigin: string }
  /** The underlying fetch. Default: the global one. */
  fetch?: typeof fetch
}

/** The wrapped fetch and what it last saw. */
export interface RunnerFetch {
  fetch: typeof fetch
  /** The last non-GET exchange (a task call), or undefined. */
  last(): HttpObservation | undefined
  reset(): void
}

const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain'])

/** True when the host is a loopback, private or link-local literal or `localhost`. */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (LOCAL_NAMES.has(host.toLowerCase()) || host.endsWith('.localhost')) return true
  try {
    checkAddress(host, {})
    return false
  } catch {
    // not a public literal: either a name (not local) or a refused address (local)
    return /^[0-9.]+$/.test(host) || host.includes(':')
  }
}

function authorization(credentials: Credentials): string | undefined {
  if (credentials.type === 'bearer') return `Bearer ${credentials.token}`
  if (credentials.type === 'basic') {
    return `Basic ${btoa(`${credentials.username}:${credentials.password}`)}`
  }
  return undefined
}

/** A fetch failure on a socket the other side closed before answering (undici `UND_ERR_SOCKET`, `ECONNRESET`). */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET'
}

/**
 * Builds the runner's fetch for one agent and one set of credentials.
 * @example const http = createRunnerFetch({ credentials: { type: 'none' }, agentUrl, maxResponseBytes: 1 << 20 })
 */
export function createRunnerFetch(options: RunnerFetchOptions): RunnerFetch {
  const base = options.fetch ?? fetch
  const agentIsLocal = isLocalHost(new URL(options.agentUrl).hostname)
  let observed: HttpObservation | undefined
  const wrapped: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    const value = authorization(options.credentials)
    if (value) headers.set('authorization', value)
    else headers.delete('authorization')
    let target = input instanceof Request ? input.url : String(input)
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET')
    const body =
      init?.body ?? (input instanceof Request && method !== 'GET' ? await input.arrayBuffer() : undefined)
    for (let hop = 0; ; hop++) {
      const route = options.route
      if (route && target.startsWith(route.publicOrigin)) {
        target = route.localOrigin + target.slice(route.publicOrigin.length)
      }
      const send = () => base(target, { ...init, method, headers, body, redirect: 'manual' })
      const response = await send().catch((error: unknown) => {
        // A pooled keep-alive socket the agent had closed as it was reused (the request never reached the
        // agent; seen on loaded machines): sent once more, on a new connection.
        if (!isStaleSocket(error)) throw error
        return send()
      })
      const location = response.headers.get('location')
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, target)
        if (hop >= 5)
          throw new StoryboardError('connection_failed', `too many redirects from ${options.agentUrl}`)
        if (!agentIsLocal && isLocalHost(next.hostname)) {
          throw new StoryboardError(
            'connection_failed',
            `refused a redirect to the local address ${next.origin}`,
          )
        }
        if (new URL(target).origin !== next.origin) headers.delete('authorization')
        target = next.href
        continue
      }
      if (method !== 'GET') {
        observed = { status: response.status, headers: Object.fromEntries(response.headers) }
      }
      return capResponseSize(response, options.maxResponseBytes)
    }
  }
  return {
    fetch: wrapped,
    last: () => observed,
    reset: () => {
      observed = undefined
    },
  }
}
