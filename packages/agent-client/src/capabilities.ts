/**
 * The one call every AdCP party makes of another: `get_adcp_capabilities`. Verifiers use it to bootstrap
 * signer keys from `identity.brand_json_url` (see `capabilitiesBootstrapResolver` in `@adwire/http-signatures`).
 */
import { assertAgentUrl, connectAgent, type ConnectOptions } from './connect.js'
import type { AgentConnection } from './connection.js'
import { AgentClientError } from './errors.js'
import { adcpError } from './result.js'

/** Options of {@link getAgentCapabilities}: those of {@link connectAgent}. */
export type AgentCapabilitiesOptions = ConnectOptions

/**
 * Calls `get_adcp_capabilities` on the agent at `agentUrl` (base or endpoint URL) and resolves with the
 * response payload (the `structuredContent` of the MCP tool result, or the DataPart of the A2A task).
 *
 * @throws {AgentClientError} `INVALID_REQUEST` for a URL that is not absolute http(s); `SERVICE_UNAVAILABLE`
 *   when the agent cannot be reached or answers with something that is not a capabilities object; the agent's
 *   own AdCP error code when it answers with an error.
 * @example
 * const capabilities = await getAgentCapabilities('https://ads.seller.example/mcp', { fetch: pinnedFetch })
 * capabilities.identity // { brand_json_url: 'https://seller.example/.well-known/brand.json', … }
 */
export async function getAgentCapabilities(
  agentUrl: string,
  options: AgentCapabilitiesOptions = {},
): Promise<Record<string, unknown>> {
  assertAgentUrl(agentUrl)
  const origin = new URL(agentUrl).origin
  const unavailable = (message: string, cause?: unknown) =>
    new AgentClientError('SERVICE_UNAVAILABLE', `get_adcp_capabilities on ${origin} failed: ${message}`, {
      cause,
    })
  let agent: AgentConnection
  try {
    agent = await connectAgent(agentUrl, options)
  } catch (error) {
    throw unavailable(error instanceof Error ? error.message : String(error), error)
  }
  try {
    const result = await agent.call(
      'get_adcp_capabilities',
      {},
      options.signal ? { signal: options.signal } : {},
    )
    const failed = adcpError(result)
    if (failed) {
      throw new AgentClientError(
        typeof failed.code === 'string' ? failed.code : 'SERVICE_UNAVAILABLE',
        `get_adcp_capabilities failed: ${typeof failed.message === 'string' ? failed.message : 'no message'}`,
      )
    }
    if (result.error !== undefined) throw unavailable(result.error, result.cause)
    if (!result.body || result.transportError) {
      throw new AgentClientError(
        'SERVICE_UNAVAILABLE',
        'get_adcp_capabilities answered no capabilities object',
      )
    }
    return result.body
  } finally {
    await agent.close().catch(() => {})
  }
}
