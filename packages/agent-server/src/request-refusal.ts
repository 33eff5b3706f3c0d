import { AgentError } from './errors.js'
import { adcpRpcErrorResponse } from './rpc-answer.js'

/**
 * A request refused by the HTTP layer before MCP or A2A parsed it (the service kit's body and JSON limits):
 * its status, a machine code, a sentence.
 */
export interface HttpRefusal {
  readonly status: number
  /** `payload_too_large`, `json_too_deep`, `lone_surrogate`, or another code of the HTTP layer. */
  readonly code: string
  readonly message: string
}

/**
 * The answer of an AdCP agent to a request refused before its transport parsed it: a JSON-RPC error (`-32600`,
 * id null, as for any request that is not valid JSON-RPC) carrying the AdCP error in `data.adcp_error`, with the
 * refusal's HTTP status. A lone surrogate is `VALIDATION_ERROR` (the text is not a string AdCP can carry);
 * a body too large or nested too deep is `INVALID_REQUEST`.
 *
 * @example
 * listen({ port: 0, refuse: refusedRequest })
 * refusedRequest({ status: 400, code: 'lone_surrogate', message: '…' })
 * // 400 { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'VALIDATION_ERROR: …', data: { adcp_error: { code: 'VALIDATION_ERROR', … } } } }
 */
export function refusedRequest(refusal: HttpRefusal): Response {
  const error = new AgentError(
    refusal.code === 'lone_surrogate' ? 'VALIDATION_ERROR' : 'INVALID_REQUEST',
    refusal.message,
    { status: refusal.status, details: { reason: refusal.code } },
  )
  return adcpRpcErrorResponse(null, -32600, error.toAdcpError(), {
    status: refusal.status,
    headers: { 'cache-control': 'no-store' },
  })
}
