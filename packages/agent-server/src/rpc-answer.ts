/**
 * The JSON-RPC 2.0 envelopes the agent's transports answer with outside their SDKs (refusals before a request
 * reaches MCP or A2A, transport checks), written once: the id echoed when it is a string or a number (null
 * otherwise, as JSON-RPC asks of a request whose id cannot be read), and an AdCP error carried in
 * `error.data.adcp_error` with the message `CODE: message`.
 */

/** A JSON-RPC id as echoed in an answer: the request's when it is a string or a number, else null. */
export type RpcId = string | number | null

/** The id to echo for a request id of any shape. */
export const rpcId = (id: unknown): RpcId => (typeof id === 'string' || typeof id === 'number' ? id : null)

/** A JSON-RPC error object. */
export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** An AdCP error as carried in `data.adcp_error` (at least its code and message). */
export interface CarriedAdcpError {
  readonly code: string
  readonly message: string
  readonly [field: string]: unknown
}

/**
 * A JSON-RPC error answer.
 *
 * @example
 * rpcErrorResponse(7, { code: -32004, message: 'streaming is not supported' }) // 200 {"jsonrpc":"2.0","id":7,"error":{…}}
 */
export function rpcErrorResponse(id: unknown, error: RpcError, init: ResponseInit = {}): Response {
  return Response.json({ jsonrpc: '2.0', id: rpcId(id), error }, init)
}

/**
 * A JSON-RPC error answer that carries an AdCP error: `{ code: rpcCode, message: 'CODE: message', data: { adcp_error } }`.
 *
 * @example
 * adcpRpcErrorResponse(null, -32600, { code: 'INVALID_REQUEST', message: 'body too large' }, { status: 413 })
 */
export function adcpRpcErrorResponse(
  id: unknown,
  rpcCode: number,
  adcpError: CarriedAdcpError,
  init: ResponseInit = {},
): Response {
  return rpcErrorResponse(
    id,
    { code: rpcCode, message: `${adcpError.code}: ${adcpError.message}`, data: { adcp_error: adcpError } },
    init,
  )
}

/**
 * A JSON-RPC result answer.
 *
 * @example
 * rpcResultResponse('a', { content: [] }) // 200 {"jsonrpc":"2.0","id":"a","result":{"content":[]}}
 */
export function rpcResultResponse(id: unknown, result: unknown, init: ResponseInit = {}): Response {
  return Response.json({ jsonrpc: '2.0', id: rpcId(id), result }, init)
}
