import type { HttpMessage } from './types.js'

/** What a request asks for, as the request-signing pre-checks need it (security.mdx "Verifier checklist (requests)"). */
export interface RequestOperation {
  /** The AdCP operation (`create_media_buy`): from the URL's last path segment, or MCP `tools/call` `params.name`. */
  readonly operation?: string
  /** The JSON-RPC protocol method (`tasks/cancel`) when the body is a JSON-RPC call other than `tools/call`. */
  readonly protocolMethod?: string
  /**
   * Whether the body registers a webhook with legacy `authentication` (`push_notification_config.authentication`,
   * `notification_configs[].authentication`): such requests must be signed (request negative vector 027).
   */
  readonly registersAuthentication: boolean
}

const decoder = new TextDecoder()
const MAX_DEPTH = 12
const MAX_NODES = 20_000

/**
 * Works out the operation of a request. The two namespaces never cross (security.mdx "Protocol-method
 * coverage"): a JSON-RPC body other than `tools/call` yields only `protocolMethod`; `tools/call` yields its
 * `params.name` as `operation`; any other body yields the URL's last path segment. An explicit `operation`
 * (one containing `/` is a protocol method) replaces the derivation, e.g. for A2A skills.
 *
 * @example
 * describeRequestOperation({ method: 'POST', url: 'https://seller.example/adcp/create_media_buy', headers: {}, body: '{}' })
 * // { operation: 'create_media_buy', registersAuthentication: false }
 */
export function describeRequestOperation(message: HttpMessage, explicit?: string): RequestOperation {
  const body = parseJson(message.body)
  const registersAuthentication = body !== undefined && hasRegistrationAuthentication(body)
  if (explicit !== undefined) {
    return explicit.includes('/')
      ? { protocolMethod: explicit, registersAuthentication }
      : { operation: explicit, registersAuthentication }
  }
  if (isRecord(body) && typeof body['jsonrpc'] === 'string' && typeof body['method'] === 'string') {
    const method = body['method']
    if (method !== 'tools/call') return { protocolMethod: method, registersAuthentication }
    const params = body['params']
    const name = isRecord(params) && typeof params['name'] === 'string' ? params['name'] : undefined
    return name === undefined ? { registersAuthentication } : { operation: name, registersAuthentication }
  }
  const operation = lastPathSegment(message.url)
  return operation === undefined ? { registersAuthentication } : { operation, registersAuthentication }
}

function parseJson(body: HttpMessage['body']): unknown {
  if (body === undefined || body === null || body.length === 0) return undefined
  try {
    return JSON.parse(typeof body === 'string' ? body : decoder.decode(body))
  } catch {
    return undefined
  }
}

function lastPathSegment(url: string): string | undefined {
  const path =
    /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(typeof url === 'string' ? url : '')?.[1] ?? ''
  const segments = path.split('/').filter((segment) => segment !== '')
  const last = segments[segments.length - 1]
  if (last === undefined) return undefined
  try {
    return decodeURIComponent(last)
  } catch {
    return last
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Looks through the body (bounded in depth and size) for a legacy-auth webhook registration. */
function hasRegistrationAuthentication(root: unknown): boolean {
  let nodes = 0
  const visit = (value: unknown, depth: number): boolean => {
    nodes += 1
    if (depth > MAX_DEPTH || nodes > MAX_NODES || typeof value !== 'object' || value === null) return false
    if (Array.isArray(value)) return value.some((item) => visit(item, depth + 1))
    const record = value as Record<string, unknown>
    const push = record['push_notification_config']
    if (isRecord(push) && isPresent(push['authentication'])) return true
    const configs = record['notification_configs']
    if (
      Array.isArray(configs) &&
      configs.some((config) => isRecord(config) && isPresent(config['authentication']))
    )
      return true
    return Object.values(record).some((child) => visit(child, depth + 1))
  }
  return visit(root, 0)
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null
}
