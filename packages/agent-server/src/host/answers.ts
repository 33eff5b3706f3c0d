/**
 * The error body of an agent host's HTTP answers outside a task (unknown routes, failures, the start-up window,
 * an app's own routes): the AdCP error object (`core/error.json`) in its envelope position,
 * `{ "adcp_error": { code, message, recovery, … } }`, the same object a failed task carries.
 */
import { AgentError, type AgentErrorCode, type AgentErrorOptions } from '../errors.js'
import { refusedRequest } from '../request-refusal.js'

/**
 * A JSON answer `{ adcp_error }` with the error's status (`retry-after` when it has `retryAfter`), never cached.
 *
 * @example
 * adcpErrorResponse('REFERENCE_NOT_FOUND', 'no preview with this id', { status: 404 })
 */
export function adcpErrorResponse(
  code: AgentErrorCode,
  message: string,
  options: AgentErrorOptions = {},
): Response {
  const error = new AgentError(code, message, options)
  return Response.json(
    { adcp_error: error.toAdcpError() },
    {
      status: error.status,
      headers: {
        'cache-control': 'no-store',
        ...(error.retryAfter !== undefined ? { 'retry-after': String(error.retryAfter) } : {}),
      },
    },
  )
}

/**
 * The answer while the host opens its database and builds its app: 503 `SERVICE_UNAVAILABLE`, `retry-after: 1`.
 *
 * @example
 * listen({ port: 0, starting: startingResponse })
 */
export const startingResponse = (): Response =>
  adcpErrorResponse('SERVICE_UNAVAILABLE', 'the agent is starting', { retryAfter: 1 })

/**
 * The service-kit `listen` options of an AdCP agent: a request refused before any route (body too large, JSON
 * too deep) as a JSON-RPC error carrying `adcp_error`, and {@link startingResponse} until the app is set.
 *
 * @example
 * await listen({ port: 0, ...AGENT_LISTEN_ANSWERS })
 */
export const AGENT_LISTEN_ANSWERS = { refuse: refusedRequest, starting: startingResponse } as const
