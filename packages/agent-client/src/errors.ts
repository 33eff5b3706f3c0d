/** The agent client's one error class. */

const brand = Symbol.for('@adwire/agent-client/AgentClientError')

/**
 * Codes the client sets itself (AdCP wire codes, `enums/error-code.json`): `INVALID_REQUEST` for an agent URL
 * that is not absolute http(s), `SERVICE_UNAVAILABLE` when the agent cannot be reached, is too slow, answers
 * too much or answers something that is not an AdCP response. Any other code is the agent's own (its
 * `adcp_error.code`).
 */
export type AgentClientErrorCode = 'INVALID_REQUEST' | 'SERVICE_UNAVAILABLE' | (string & {})

/**
 * A failed call on an agent.
 *
 * @example
 * try { await getAgentCapabilities('https://seller.example/mcp') }
 * catch (error) { if (AgentClientError.is(error) && error.code === 'SERVICE_UNAVAILABLE') retryLater() }
 */
export class AgentClientError extends Error {
  override readonly name = 'AgentClientError'
  readonly [brand] = true
  constructor(
    readonly code: AgentClientErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for an {@link AgentClientError} of any copy of this package. */
  static is(value: unknown): value is AgentClientError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
