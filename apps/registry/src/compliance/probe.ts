/**
 * Talking to a live agent: the agent URL as registered mapped to a transport (MCP streamable HTTP at
 * `<base>/mcp`, or A2A from `<base>/.well-known/agent-card.json`, with the official SDK clients of
 * `@adwire/agent-client`), every byte over the SSRF-safe pinned fetch of
 * `@adwire/http-signatures/node` (https and public addresses only unless the operator allows private agents;
 * the connection goes to the address that was checked), bounded in time and size, with the agent's saved
 * credential presented as a bearer.
 */
import { agentEndpoint, connectAgent, type AgentConnection, type Protocol } from '@adwire/agent-client'
import { SignatureError } from '@adwire/http-signatures'
import { createPinnedFetch } from '@adwire/http-signatures/node'
import type { AgentCredential } from './contract.js'

export type AgentProtocol = Protocol

/** How the registry reaches agents (probing and compliance runs). */
export interface AgentAccessPolicy {
  /**
   * Local use and tests only: plain `http:` agents on loopback and private addresses. Off by default: agents
   * are https-only on public addresses.
   */
  readonly allowPrivate: boolean
  /** One HTTP exchange with an agent, ms. */
  readonly timeoutMs: number
  /** Largest response body from an agent, bytes. */
  readonly maxBytes: number
}

export const DEFAULT_AGENT_ACCESS: AgentAccessPolicy = {
  allowPrivate: false,
  timeoutMs: 15_000,
  maxBytes: 4 * 1024 * 1024,
}

/** The pinned fetch of a policy. */
export function createAgentFetch(policy: AgentAccessPolicy): typeof fetch {
  return createPinnedFetch({
    allowHttp: policy.allowPrivate,
    allowLoopback: policy.allowPrivate,
    allowPrivate: policy.allowPrivate,
    timeoutMs: policy.timeoutMs,
    maxBytes: policy.maxBytes,
    userAgent: 'adwire-registry',
  })
}

/** Why talking to an agent failed: `refused` (SSRF policy), `timeout`, `unreachable`, `protocol` (no MCP/A2A). */
export class ProbeError extends Error {
  override readonly name = 'ProbeError'
  constructor(
    readonly kind: 'refused' | 'timeout' | 'unreachable' | 'protocol',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The most specific reason in an error's cause chain. */
export function classifyError(error: unknown, what: string): ProbeError {
  if (error instanceof ProbeError) return error
  let current: unknown = error
  for (let depth = 0; current && depth < 8; depth++) {
    if (SignatureError.is(current)) {
      if (current.code === 'fetch_refused')
        return new ProbeError('refused', current.message, { cause: error })
      if (/timed out/.test(current.message))
        return new ProbeError('timeout', current.message, { cause: error })
      return new ProbeError('unreachable', current.message, { cause: error })
    }
    current = (current as { cause?: unknown }).cause
  }
  const message = error instanceof Error ? error.message : String(error)
  if (/timed out|timeout|aborted/i.test(message)) return new ProbeError('timeout', `${what}: ${message}`)
  return new ProbeError('protocol', `${what}: ${message.slice(0, 300)}`, { cause: error })
}

/** `fetch` presenting `token` as a bearer on every request. */
export function withBearer(fetchImpl: typeof fetch, token: string | undefined): typeof fetch {
  if (!token) return fetchImpl
  return (input, init) => {
    const request = new Request(input, init)
    const headers = new Headers(request.headers)
    headers.set('authorization', `Bearer ${token}`)
    return fetchImpl(new Request(request, { headers }))
  }
}

/**
 * The bearer token a credential stands for: the token itself, or an access token from the agent's token
 * endpoint (OAuth 2.0 client credentials, RFC 6749 §4.4), fetched through the same SSRF-safe fetch.
 */
export async function bearerFor(
  credential: AgentCredential | undefined,
  fetchImpl: typeof fetch,
): Promise<string | undefined> {
  if (!credential) return undefined
  if (credential.type === 'bearer') return credential.token
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (credential.scope) form.set('scope', credential.scope)
  let response: Response
  try {
    response = await fetchImpl(credential.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${encodeURIComponent(credential.clientId)}:${encodeURIComponent(credential.clientSecret)}`)}`,
      },
      body: form.toString(),
    })
  } catch (error) {
    throw classifyError(error, 'token endpoint')
  }
  const body = (await response.json().catch(() => undefined)) as { access_token?: unknown } | undefined
  if (!response.ok || typeof body?.access_token !== 'string') {
    throw new ProbeError('protocol', `the token endpoint answered ${response.status} without an access_token`)
  }
  return body.access_token
}

/** One connected agent. */
export interface AgentSession {
  readonly protocol: AgentProtocol
  /** MCP server name or A2A card name. */
  readonly name: string
  readonly description?: string
  /** MCP tools or A2A skills. */
  readonly tools: ReadonlyArray<{ name: string; description?: string }>
  /** Calls a task; resolves to its AdCP response object, or throws {@link ProbeError}. */
  call(task: string, args: Record<string, unknown>): Promise<Record<string, unknown>>
  close(): Promise<void>
}

/** The connection as a session: the agent's name and tasks read once, a failed call a {@link ProbeError}. */
async function session(url: string, agent: AgentConnection): Promise<AgentSession> {
  try {
    const described = await agent.describe()
    return {
      protocol: agent.protocol,
      name: described.name || url,
      ...(described.description ? { description: described.description } : {}),
      tools: described.tasks.map((task) => ({ ...task })),
      async call(task, args) {
        const result = await agent.call(task, args)
        if (result.error !== undefined) throw result.cause ?? new Error(result.error)
        const body = result.body
        if (result.transportError || !body) {
          if (!result.transportError && agent.protocol === 'a2a') {
            throw new ProbeError('protocol', `${task} answered no data`)
          }
          const detail =
            body?.adcp_error ?? body ?? (result.raw as { content?: unknown } | undefined)?.content ?? {}
          throw new ProbeError('protocol', `${task} failed: ${JSON.stringify(detail).slice(0, 300)}`)
        }
        return body
      },
      close: () => agent.close(),
    }
  } catch (error) {
    await agent.close().catch(() => {})
    throw error
  }
}

/** Options of {@link openAgent}. */
export interface OpenOptions {
  /** The SSRF-safe fetch (see {@link createAgentFetch}). */
  readonly fetch: typeof fetch
  readonly credential?: AgentCredential
  /** Only this transport (default: the URL's, else MCP then A2A). */
  readonly protocol?: AgentProtocol
}

/**
 * Connects to the agent at `url` over its transport; throws {@link ProbeError}.
 *
 * @example
 * const agent = await openAgent('https://creative.example/mcp', { fetch: createAgentFetch(DEFAULT_AGENT_ACCESS) })
 * const capabilities = await agent.call('get_adcp_capabilities', {})
 * await agent.close()
 */
export async function openAgent(url: string, options: OpenOptions): Promise<AgentSession> {
  const endpoint = agentEndpoint(url)
  const token = await bearerFor(options.credential, options.fetch)
  const fetchImpl = withBearer(options.fetch, token)
  const order: AgentProtocol[] = options.protocol
    ? [options.protocol]
    : endpoint.protocol
      ? [endpoint.protocol]
      : ['mcp', 'a2a']
  let last: ProbeError | undefined
  for (const protocol of order) {
    try {
      const agent = await connectAgent(endpoint.protocol ? url : endpoint.base, {
        protocol,
        fetch: fetchImpl,
        clientInfo: { name: 'adwire-registry', version: '1.0.0' },
      })
      return await session(endpoint.base, agent)
    } catch (error) {
      last = classifyError(error, `${protocol.toUpperCase()} at ${endpoint.base}`)
      // A refused or silent address is the same over either transport.
      if (last.kind === 'refused' || last.kind === 'timeout') throw last
    }
  }
  throw last ?? new ProbeError('protocol', `no transport for ${url}`)
}

/**
 * Runs `work` within `ms`; a slower agent is a `timeout` {@link ProbeError}. The work is not cancelled (each
 * of its exchanges has its own deadline in the pinned fetch), its result is dropped.
 */
export async function withDeadline<T>(ms: number, what: string, work: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ProbeError('timeout', `${what} took longer than ${ms} ms`)), ms)
  })
  const running = work()
  running.catch(() => {})
  try {
    return await Promise.race([running, deadline])
  } finally {
    clearTimeout(timer)
  }
}
