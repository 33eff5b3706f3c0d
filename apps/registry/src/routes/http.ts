/**
 * The shared HTTP helpers of the routes: the error body of the official document (`{ "error": code,
 * "message": … }`), JSON body
 * reading with a size cap and OpenAPI request validation, response validation, and the bearer guard of
 * locked endpoints.
 */
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { checkRequestBody, checkResponse } from '../spec/validators.js'
import type { RegistryDeps, Principal } from '../deps.js'
import { isHttpUrl } from '../domain/names.js'

/** An error answered as `{ error: code, message, ...extra }` with `status`. */
export class HttpError extends Error {
  override readonly name = 'HttpError'
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/**
 * The one error body of the registry: the official document's `Error` — `error` is the machine-readable code
 * (as in its `410 { error: "cursor_expired", message }`), `message` is for people — with the extra members an
 * operation's error schema asks for (`domain`, `retry_after`, `retryAfter`…) or `details`.
 *
 * @example
 * errorBody('brand_not_found', 'no brand.json at nothing.example', { domain: 'nothing.example' })
 * // { error: 'brand_not_found', message: 'no brand.json at nothing.example', domain: 'nothing.example' }
 */
export const errorBody = (code: string, message: string, extra: Record<string, unknown> = {}) => ({
  error: code,
  message,
  ...extra,
})

/** Largest JSON request body accepted, bytes (bulk property checks carry up to 10,000 domains). */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Reads and validates the JSON body of `operationId`; throws {@link HttpError} 400/413/415.
 *
 * @example
 * const body = await readBody<{ domains: string[] }>(c, 'resolveBrandsBulk', 16 * 1024)
 */
export async function readBody<T>(c: Context, operationId: string, maxBytes = MAX_BODY_BYTES): Promise<T> {
  const type = c.req.header('content-type') ?? ''
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'send the body as application/json')
  }
  const declared = Number(c.req.header('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new HttpError(413, 'payload_too_large', `the body exceeds ${maxBytes} bytes`)
  }
  const buffer = await c.req.arrayBuffer()
  if (buffer.byteLength > maxBytes)
    throw new HttpError(413, 'payload_too_large', `the body exceeds ${maxBytes} bytes`)
  let body: unknown
  try {
    body = JSON.parse(new TextDecoder().decode(buffer))
  } catch {
    throw new HttpError(400, 'invalid_json', 'the body is not valid JSON')
  }
  const problem = checkRequestBody(operationId, body)
  if (problem) throw new HttpError(400, 'invalid_request', problem)
  const tooLong = overlongString(body, '')
  if (tooLong) {
    throw new HttpError(400, 'value_too_long', `${tooLong.path} is longer than ${tooLong.max} characters`, {
      details: { field: tooLong.path, maximum: tooLong.max },
    })
  }
  return body as T
}

/** The longest URL this registry accepts (agent URLs, logo URLs, query values), characters. */
export const MAX_URL_LENGTH = 2048
/** The longest name (brand, organization, agent, property names), characters. */
export const MAX_NAME_LENGTH = 256
/** The longest free-text string anywhere else in a JSON body, characters. */
export const MAX_TEXT_LENGTH = 10_000

/** The maximum length of a JSON member by its name (see README, "Limits"). */
function maxLengthOf(key: string): number {
  if (key === 'domain' || key.endsWith('_domain')) return 253
  if (key === 'url' || key.endsWith('_url') || key === 'authoritative_location') return MAX_URL_LENGTH
  if (key === 'name' || key.endsWith('_name')) return MAX_NAME_LENGTH
  return MAX_TEXT_LENGTH
}

/** The first string in `value` longer than its member's maximum, with its path. */
function overlongString(value: unknown, path: string, key = ''): { path: string; max: number } | undefined {
  if (typeof value === 'string') {
    const max = maxLengthOf(key)
    return value.length > max ? { path: path || '(body)', max } : undefined
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = overlongString(item, `${path}[${index}]`, key)
      if (found) return found
    }
    return undefined
  }
  if (value && typeof value === 'object') {
    for (const [name, item] of Object.entries(value)) {
      const found = overlongString(item, path ? `${path}.${name}` : name, name)
      if (found) return found
    }
  }
  return undefined
}

/**
 * An agent URL from a query, path or body: an absolute `http:` or `https:` URL of at most
 * {@link MAX_URL_LENGTH} characters; 400 `invalid_agent_url` otherwise (`ftp://…`, `not-a-url`).
 */
export function agentUrlParam(value: string | undefined, name: string): string {
  const url = required(value, name)
  if (url.length > MAX_URL_LENGTH || !isHttpUrl(url)) {
    throw new HttpError(
      400,
      'invalid_agent_url',
      `${name} must be an absolute http(s) URL of at most ${MAX_URL_LENGTH} characters`,
      { details: { parameter: name } },
    )
  }
  return url
}

/** Sends `body` with `status`, checked against the operation's response schema as `deps` asks. */
export function reply(
  c: Context,
  deps: RegistryDeps,
  operationId: string,
  body: unknown,
  status: ContentfulStatusCode = 200,
): Response {
  if (deps.validateResponses !== 'off') {
    const problem = checkResponse(operationId, status, body)
    if (problem) {
      deps.log({ response_invalid: operationId, problem })
      if (deps.validateResponses === 'strict') {
        return c.json(
          errorBody('response_invalid', `the response did not match the OpenAPI document: ${problem}`),
          500,
        )
      }
    }
  }
  return c.json(body as object, status)
}

const principals = new WeakMap<Request, Promise<Principal | undefined>>()

/** Who sent the request (`undefined`: no or a bad credential), authenticated once per request. */
export function principalOf(c: Context, deps: RegistryDeps): Promise<Principal | undefined> {
  let found = principals.get(c.req.raw)
  if (!found) {
    found = deps.auth.authenticate(c.req.raw)
    principals.set(c.req.raw, found)
  }
  return found
}

/**
 * The principal of a locked endpoint's request; throws 401 (no or bad credential) with a `WWW-Authenticate`
 * pointing at the protected-resource metadata.
 */
export async function requirePrincipal(c: Context, deps: RegistryDeps): Promise<Principal> {
  const principal = await principalOf(c, deps)
  if (principal) return principal
  const hasCredential = /^Bearer\s+\S+/i.test(c.req.header('authorization') ?? '')
  throw new HttpError(
    401,
    hasCredential ? 'invalid_token' : 'unauthorized',
    hasCredential
      ? 'the bearer credential is invalid, revoked or expired'
      : 'send Authorization: Bearer with an organization API key (sk_…) or a user access token',
    {},
    {
      'WWW-Authenticate': `Bearer resource_metadata="${deps.publicUrl(c)}/.well-known/oauth-protected-resource/api"${hasCredential ? ', error="invalid_token"' : ''}`,
    },
  )
}

/** The organization of a principal; 403 when it has none. */
export function requireOrg(principal: Principal, requested?: string): string {
  const orgId = principal.orgId ?? (principal.kind === 'org' ? principal.id : undefined)
  if (!orgId)
    throw new HttpError(403, 'membership_required', 'this endpoint is for members of an organization')
  if (requested !== undefined && requested !== '' && requested !== orgId) {
    throw new HttpError(403, 'forbidden', `you are not a member of organization ${requested}`)
  }
  return orgId
}

/** An integer query parameter within bounds (both documented), or the fallback; 400 when malformed or outside. */
export function intParam(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') return fallback
  const number = Number(value)
  if (!/^-?[0-9]+$/.test(value) || !Number.isSafeInteger(number) || number < min || number > max) {
    throw new HttpError(
      400,
      'invalid_parameter',
      max === Number.MAX_SAFE_INTEGER
        ? `${name} must be a whole number ≥ ${min}`
        : `${name} must be a whole number from ${min} to ${max}`,
      { details: { parameter: name, minimum: min, maximum: max } },
    )
  }
  return number
}

/** A boolean query parameter (`true` or `false`), or `false` when absent; 400 otherwise (`fresh=maybe`). */
export function boolParam(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false') return false
  if (value === 'true') return true
  throw new HttpError(400, 'invalid_parameter', `${name} must be true or false`, {
    details: { parameter: name },
  })
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A path parameter the document declares `format: uuid`; 400 when it is not one (instead of a 404). */
export function uuidParam(value: string | undefined, name: string): string {
  if (value === undefined || !UUID.test(value))
    throw new HttpError(400, 'invalid_parameter', `${name} must be a UUID`, { details: { parameter: name } })
  return value.toLowerCase()
}

/** A required query parameter; 400 when missing. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === '')
    throw new HttpError(400, 'missing_parameter', `${name} is required`)
  return value.trim()
}
