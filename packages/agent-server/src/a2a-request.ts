/**
 * The raw A2A request builder and response reader as this package exported them before they moved to
 * `@adwire/agent-client`.
 */
import {
  a2aResponseData as readResponseData,
  a2aSendRequest,
  type A2ASendRequestOptions,
} from '@adwire/agent-client'

/**
 * Options of {@link a2aInvocation}.
 * @deprecated Use `A2ASendRequestOptions` of `@adwire/agent-client`.
 */
export type A2AInvocationOptions = A2ASendRequestOptions

/**
 * The headers and JSON body of one A2A message send invoking an AdCP task.
 *
 * @deprecated Use `a2aSendRequest` of `@adwire/agent-client`.
 * @example const { headers, body } = a2aInvocation({ skill: 'list_creative_formats', input: {} })
 */
export const a2aInvocation: typeof a2aSendRequest = a2aSendRequest

/**
 * The AdCP response in an A2A JSON-RPC answer.
 *
 * @deprecated Use `a2aResponseData` of `@adwire/agent-client`.
 * @example a2aResponseData(await answer.json())
 */
export const a2aResponseData: typeof readResponseData = readResponseData
