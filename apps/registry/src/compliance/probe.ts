/**
 * Talking to a live agent: the agent URL as registered mapped to a transport (MCP streamable HTTP at
 * `<base>/mcp` with the official `@modelcontextprotocol/sdk` client, or A2A from `<base>/.well-known/agent-card.json`
 * with the official `@a2a-js/sdk` client), every byte over the SSRF-safe pinned fetch of
 * `@adwire/http-signatures/node` (https and public addresses only unless the operator allows private agents;
 * the connection goes to the address that was checked), bounded in time and size, with the agent's saved
 * credential presented as a bearer.
 */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client'
import { SignatureError } from '@adwire/http-signatures'
import { createPinnedFetch } from '@adwire/http-signatures/node'
import { a2aInvocation, ADCP_A2A_EXTENSION } from '@adwire/storyboards'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { AgentCredential } from './contract.js'

export type AgentProtocol = 'mcp' | 'a2a'

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

/** Where an agent URL as registered is served: its base URL and, when the URL says, the transport. */
export function agentEndpoint(url: string): { base: string; protocol?: AgentProtocol } {
  const trimmed = url.trim().replace(/\/+$/, '')
  const suffixes: Array<[RegExp, AgentProtocol]> = [
    [/\/mcp$/, 'mcp'],
    [/\/a2a$/, 'a2a'],
    [/\/\.well-known\/agent(-card)?\.json$/, 'a2a'],
  ]
  for (const [suffix, protocol] of suffixes) {
    if (suffix.test(trimmed)) return { base: trimmed.replace(suffix, ''), protocol }
  }
  return { base: trimmed }
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

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

function textJson(content: unknown): Record<string, unknown> | undefined {
  const first = Array.isArray(content) ? (content[0] as { type?: string; text?: string }) : undefined
  if (first?.type !== 'text' || typeof first.text !== 'string') return undefined
  try {
    const parsed: unknown = JSON.parse(first.text)
    return isRecord(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

async function connectMcp(base: string, fetchImpl: typeof fetch): Promise<AgentSession> {
  const client = new Client({ name: 'adwire-registry', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: fetchImpl }))
  try {
    const server = client.getServerVersion()
    const tools = (await client.listTools()).tools
    return {
      protocol: 'mcp',
      name: server?.title ?? server?.name ?? base,
      ...(client.getInstructions() ? { description: client.getInstructions()! } : {}),
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
      })),
      async call(task, args) {
        const result = (await client.callTool({ name: task, arguments: args })) as {
          structuredContent?: unknown
          content?: unknown
          isError?: boolean
        }
        const body = isRecord(result.structuredContent) ? result.structuredContent : textJson(result.content)
        if (result.isError || !body) {
          throw new ProbeError(
            'protocol',
            `${task} failed: ${JSON.stringify(body?.adcp_error ?? body ?? result.content).slice(0, 300)}`,
          )
        }
        return body
      },
      close: () => client.close(),
    }
  } catch (error) {
    await client.close().catch(() => {})
    throw error
  }
}

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})

function lastData(parts: readonly Part[] | undefined): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined
  for (const part of parts ?? []) {
    if (part.content?.$case === 'data' && isRecord(part.content.value)) found = part.content.value
  }
  return found
}

async function connectA2a(base: string, fetchImpl: typeof fetch): Promise<AgentSession> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      // legacyCompat: an agent whose card offers only A2A 0.3 (as agents written to earlier 3.x rules do) is
      // spoken to in 0.3; a card offering 1.0 gets 1.0.
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    }),
  )
  const client = await factory.createFromUrl(base)
  const card = await client.getAgentCard()
  return {
    protocol: 'a2a',
    name: card.name || base,
    ...(card.description ? { description: card.description } : {}),
    tools: card.skills.map((skill) => ({
      name: skill.id,
      ...(skill.description ? { description: skill.description } : {}),
    })),
    async call(task, args) {
      const result = await client.sendMessage(
        {
          tenant: '',
          message: {
            messageId: crypto.randomUUID(),
            contextId: '',
            taskId: '',
            role: Role.ROLE_USER,
            parts: [dataPart(a2aInvocation(client.protocolVersion, task, args))],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          configuration: undefined,
          metadata: undefined,
        },
        { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
      )
      if (!('status' in result)) {
        const body = lastData(result.parts)
        if (!body) throw new ProbeError('protocol', `${task} answered no data`)
        return body
      }
      const a2aTask = result as Task
      const body =
        lastData(a2aTask.artifacts.flatMap((artifact) => artifact.parts)) ??
        lastData(a2aTask.status?.message?.parts)
      if (/FAILED|REJECTED/i.test(String(a2aTask.status?.state ?? '')) || !body) {
        throw new ProbeError('protocol', `${task} failed: ${JSON.stringify(body ?? {}).slice(0, 300)}`)
      }
      return body
    },
    close: async () => {},
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
      return protocol === 'mcp'
        ? await connectMcp(endpoint.base, fetchImpl)
        : await connectA2a(endpoint.base, fetchImpl)
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
