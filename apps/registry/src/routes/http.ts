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
  return body as T
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

/**
 * The principal of a locked endpoint's request; throws 401 (no or bad credential) with a `WWW-Authenticate`
 * pointing at the protected-resource metadata.
 */
export async function requirePrincipal(c: Context, deps: RegistryDeps): Promise<Principal> {
  const principal = await deps.auth.authenticate(c.req.raw)
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

/** A positive integer query parameter within bounds, or the fallback; 400 when malformed. */
export function intParam(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') return fallback
  const number = Number(value)
  if (!Number.isInteger(number) || number < min) {
    throw new HttpError(400, 'invalid_parameter', `${name} must be a whole number ≥ ${min}`)
  }
  return Math.min(number, max)
}

/** A required query parameter; 400 when missing. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === '')
    throw new HttpError(400, 'missing_parameter', `${name} is required`)
  return value.trim()
}
