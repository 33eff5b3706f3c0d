/**
 * The one error body of the creative agent's HTTP answers outside a task (preview pages, generated audio,
 * unknown routes, failures, the start-up window): the AdCP error object (`core/error.json`) in its envelope
 * position, `{ "adcp_error": { code, message, recovery, … } }`, the same object a failed task carries.
 */
import { AgentError, type AgentErrorCode, type AgentErrorOptions } from '@adwire/agent-server'

/**
 * A JSON answer `{ adcp_error }` with the error's status (`retry-after` when it has `retryAfter`).
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
