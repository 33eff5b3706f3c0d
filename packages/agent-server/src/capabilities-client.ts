/**
 * `getAgentCapabilities` as this package exported it before the client side moved to `@adwire/agent-client`:
 * the same call, its errors as {@link AgentError} (same codes).
 */
import {
  AgentClientError,
  getAgentCapabilities as readCapabilities,
  type AgentCapabilitiesOptions as ClientOptions,
} from '@adwire/agent-client'
import { AgentError } from './errors.js'

/**
 * Options of {@link getAgentCapabilities}.
 * @deprecated Use `AgentCapabilitiesOptions` of `@adwire/agent-client`.
 */
export type AgentCapabilitiesOptions = ClientOptions

/**
 * Calls `get_adcp_capabilities` on the agent at `agentUrl`; throws {@link AgentError}.
 *
 * @deprecated Use `getAgentCapabilities` of `@adwire/agent-client` (it throws `AgentClientError`, same codes).
 * @example
 * const capabilities = await getAgentCapabilities('https://ads.seller.example/mcp')
 */
export async function getAgentCapabilities(
  agentUrl: string,
  options: AgentCapabilitiesOptions = {},
): Promise<Record<string, unknown>> {
  try {
    return await readCapabilities(agentUrl, options)
  } catch (error) {
    if (!AgentClientError.is(error)) throw error
    throw new AgentError(error.code, error.message, { cause: error.cause ?? error })
  }
}
