/**
 * The client side of the one call every AdCP party makes of another: `get_adcp_capabilities`, over MCP
 * (official SDK client, streamable HTTP) or A2A (one JSON-RPC `SendMessage` with the AdCP extension activated).
 * Verifiers use it to bootstrap signer keys from `identity.brand_json_url` (see `capabilitiesBootstrapResolver`
 * in `@adwire/http-signatures`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { a2aInvocation, a2aResponseData } from './a2a-request.js'
import { AgentError } from './errors.js'

/** Options of {@link getAgentCapabilities}. */
export interface AgentCapabilitiesOptions {
  /** How the agent is spoken to at `agentUrl`: its MCP endpoint or its A2A JSON-RPC endpoint. Default `mcp`. */
  readonly protocol?: 'mcp' | 'a2a'
  /**
   * The fetch to use (a caller reaching untrusted agents passes one that refuses private addresses and
   * redirects). Default: the global `fetch`.
   */
  readonly fetch?: typeof fetch
  /** Aborts the call (connection, handshake and request). */
  readonly signal?: AbortSignal
  /** Extra request headers, such as `authorization` for an agent that wants credentials. */
  readonly headers?: Readonly<Record<string, string>>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Calls `get_adcp_capabilities` on the agent at `agentUrl` and resolves with the response payload (the
 * `structuredContent` of the MCP tool result, or the DataPart of the A2A task's artifact).
 *
 * @throws {AgentError} `SERVICE_UNAVAILABLE` when the agent cannot be reached or answers with something that
 *   is not a capabilities object; the agent's own AdCP error code when it answers with an error.
 * @example
 * const capabilities = await getAgentCapabilities('https://ads.seller.example/mcp')
 * capabilities.identity?.brand_json_url // 'https://seller.example/.well-known/brand.json'
 */
export async function getAgentCapabilities(
  agentUrl: string,
  options: AgentCapabilitiesOptions = {},
): Promise<Record<string, unknown>> {
  if (!URL.canParse(agentUrl) || !/^https?:$/.test(new URL(agentUrl).protocol)) {
    throw new AgentError('INVALID_REQUEST', 'agentUrl must be an absolute http(s) URL', { field: 'agentUrl' })
  }
  let payload: unknown
  try {
    payload = options.protocol === 'a2a' ? await viaA2a(agentUrl, options) : await viaMcp(agentUrl, options)
  } catch (error) {
    if (AgentError.is(error)) throw error
    throw new AgentError(
      'SERVICE_UNAVAILABLE',
      `get_adcp_capabilities on ${new URL(agentUrl).origin} failed: ${(error as Error).message}`,
      { cause: error },
    )
  }
  if (!isRecord(payload)) {
    throw new AgentError('SERVICE_UNAVAILABLE', 'get_adcp_capabilities answered no capabilities object')
  }
  const failure = isRecord(payload.adcp_error) ? payload.adcp_error : undefined
  if (failure) {
    throw new AgentError(
      typeof failure.code === 'string' ? failure.code : 'SERVICE_UNAVAILABLE',
      `get_adcp_capabilities failed: ${typeof failure.message === 'string' ? failure.message : 'no message'}`,
    )
  }
  return payload
}

async function viaMcp(agentUrl: string, options: AgentCapabilitiesOptions): Promise<unknown> {
  const transport = new StreamableHTTPClientTransport(new URL(agentUrl), {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { requestInit: { headers: { ...options.headers } } } : {}),
  })
  const client = new Client({ name: 'adwire', version: '1' })
  const request = options.signal ? { signal: options.signal } : undefined
  try {
    await client.connect(transport, request)
    const result = await client.callTool({ name: 'get_adcp_capabilities', arguments: {} }, undefined, request)
    if (result.structuredContent !== undefined) return result.structuredContent
    const text = Array.isArray(result.content)
      ? result.content.find((part): part is { type: 'text'; text: string } => part?.type === 'text')
      : undefined
    return text ? (JSON.parse(text.text) as unknown) : undefined
  } finally {
    await client.close().catch(() => {})
  }
}

async function viaA2a(agentUrl: string, options: AgentCapabilitiesOptions): Promise<unknown> {
  const fetchImpl = options.fetch ?? fetch
  const { headers, body } = a2aInvocation({ skill: 'get_adcp_capabilities', input: {} })
  const response = await fetchImpl(agentUrl, {
    method: 'POST',
    redirect: 'error',
    ...(options.signal ? { signal: options.signal } : {}),
    headers: { ...options.headers, ...headers },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`HTTP ${response.status}`)
  return a2aResponseData(await response.json())
}
