/** What this package exported before the agent calls moved to `@adwire/agent-client`. */
import { a2aInvocationData, ADCP_A2A_EXTENSION as EXTENSION } from '@adwire/agent-client'

/**
 * The AdCP A2A profile extension URI.
 * @deprecated Use `ADCP_A2A_EXTENSION` of `@adwire/agent-client`.
 * @example withA2AExtensions(ADCP_A2A_EXTENSION)
 */
export const ADCP_A2A_EXTENSION: typeof EXTENSION = EXTENSION

/**
 * The AdCP invocation DataPart of a task.
 * @deprecated Use `a2aInvocationData(skill, args, protocolVersion)` of `@adwire/agent-client`.
 * @example a2aInvocation(client.protocolVersion, 'get_products', { brief: 'outdoor' })
 */
export function a2aInvocation(
  protocolVersion: string,
  skill: string,
  args: Record<string, unknown>,
): Record<string, unknown> {
  return a2aInvocationData(skill, args, protocolVersion)
}
