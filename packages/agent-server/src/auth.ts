import { createHash } from 'node:crypto'
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose'
import { AgentError } from './errors.js'
import type { Access, Permission, Principal, Resource } from './types.js'

/** Looks an opaque bearer token up; undefined when unknown. */
export type TokenLookup = (token: string) => Principal | undefined | Promise<Principal | undefined>

/** JWT bearer verification (RFC 7519 with jose): `sub`, `exp` and `iat` required, issuer and audience checked. */
export interface JwtAuthOptions {
  readonly issuer: string
  readonly audience: string
  /** A JWKS (public keys) or an HMAC secret. */
  readonly key: JSONWebKeySet | Uint8Array | string
  readonly algorithms?: readonly string[]
  /** Seconds of clock tolerance. Default 30. */
  readonly clockToleranceSeconds?: number
  /**
   * Maps the verified claims to permissions. Default: a `permissions` claim shaped like
   * {@link Principal.permissions}, else the `scope` claim: `adcp:creatives` grants every permission on
   * creatives, `adcp:creatives:read` only read.
   */
  readonly permissions?: (payload: JWTPayload) => Principal['permissions']
}

export interface AuthOptions {
  readonly tokens?: TokenLookup
  readonly jwt?: JwtAuthOptions
  /**
   * The RFC 9728 protected-resource metadata URL, when the agent (or its gateway) serves one: sent as
   * `resource_metadata` in the `WWW-Authenticate` challenge of a 401.
   */
  readonly resourceMetadataUrl?: string
  /**
   * A present but unknown or expired bearer on a public task is refused (`401` `AUTH_INVALID` with
   * `WWW-Authenticate`) instead of served as an anonymous call. Default false.
   */
  readonly refuseInvalidOnPublicTasks?: boolean
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex')
const RESOURCES: readonly Resource[] = ['products', 'media_buys', 'creatives', 'reports']
const PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'approve']

/**
 * An opaque-token lookup that keeps only the SHA-256 of each token, never the token itself.
 *
 * @example
 * const tokens = hashedTokenAuth({ [process.env.BUYER_TOKEN!]: { principal_id: 'buyer-1', permissions: { creatives: ['read', 'write'] } } })
 * createAgentServer({ ..., auth: { tokens } })
 */
export function hashedTokenAuth(tokens: Readonly<Record<string, Principal>>): TokenLookup {
  const byHash = new Map<string, Principal>()
  for (const [token, principal] of Object.entries(tokens)) byHash.set(sha256(token), principal)
  return (token) => byHash.get(sha256(token))
}

/** The same lookup from precomputed SHA-256 hex digests (e.g. loaded from a database). */
export function hashedTokenLookup(digests: ReadonlyMap<string, Principal>): TokenLookup {
  return (token) => digests.get(sha256(token))
}

function scopePermissions(payload: JWTPayload): Principal['permissions'] {
  if (typeof payload.permissions === 'object' && payload.permissions !== null)
    return payload.permissions as Principal['permissions']
  const granted: Partial<Record<Resource, Permission[]>> = {}
  const scope = typeof payload.scope === 'string' ? payload.scope : ''
  for (const item of scope.split(' ')) {
    const [prefix, resource, permission] = item.split(':')
    if (prefix !== 'adcp' || !RESOURCES.includes(resource as Resource)) continue
    const list = (granted[resource as Resource] ??= [])
    if (permission === undefined) list.push(...PERMISSIONS)
    else if (PERMISSIONS.includes(permission as Permission)) list.push(permission as Permission)
  }
  return granted
}

/**
 * What jose leaves to us (AdCP security.mdx: `sub` string, `exp` and `iat` integers in Unix seconds): a
 * non-empty `sub`, whole-second `exp` and `iat`, and an `iat` not in the future (beyond the clock tolerance).
 */
function checkTimeClaims(payload: JWTPayload, now: number, tolerance: number): void {
  if (typeof payload.sub !== 'string' || payload.sub === '')
    throw new Error('"sub" must be a non-empty string')
  for (const claim of ['exp', 'iat'] as const)
    if (!Number.isSafeInteger(payload[claim])) throw new Error(`"${claim}" must be an integer (Unix seconds)`)
  if ((payload.iat as number) > now + tolerance) throw new Error('"iat" is in the future')
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** Builds the authenticator: `Authorization` header value to a principal, undefined without credentials. */
export function createAuthenticator(
  options: AuthOptions | undefined,
  now: () => number,
): (authorization: string | null | undefined) => Promise<Principal | undefined> {
  const jwt = options?.jwt
  const jwtKey = jwt
    ? typeof jwt.key === 'string'
      ? new TextEncoder().encode(jwt.key)
      : jwt.key instanceof Uint8Array
        ? jwt.key
        : createLocalJWKSet(jwt.key)
    : undefined
  return async (authorization) => {
    if (authorization === null || authorization === undefined || authorization === '') return undefined
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)
    if (!match?.[1]) throw new AgentError('AUTH_INVALID', 'the Authorization header is not a Bearer token')
    const token = match[1]
    if (jwt && jwtKey && JWT_SHAPE.test(token)) {
      try {
        const verified = await jwtVerify(token, jwtKey as Parameters<typeof jwtVerify>[1], {
          issuer: jwt.issuer,
          audience: jwt.audience,
          requiredClaims: ['sub', 'exp', 'iat'],
          clockTolerance: jwt.clockToleranceSeconds ?? 30,
          currentDate: new Date(now() * 1000),
          ...(jwt.algorithms ? { algorithms: [...jwt.algorithms] } : {}),
        })
        const payload = verified.payload
        checkTimeClaims(payload, now(), jwt.clockToleranceSeconds ?? 30)
        return {
          principal_id: String(payload.sub),
          permissions: (jwt.permissions ?? scopePermissions)(payload),
        }
      } catch (error) {
        throw new AgentError('AUTH_INVALID', 'the bearer token was rejected', { cause: error })
      }
    }
    const principal = options?.tokens ? await options.tokens(token) : undefined
    if (!principal) throw new AgentError('AUTH_INVALID', 'the bearer token was rejected')
    return principal
  }
}

/** Checks a task's access rule against the caller. */
export function authorize(access: Access, principal: Principal | undefined, task: string): void {
  if (access === 'public') return
  if (!principal) throw new AgentError('AUTH_MISSING', `${task} requires credentials (Authorization: Bearer)`)
  const granted = principal.permissions[access.resource] ?? []
  if (!granted.includes(access.permission))
    throw new AgentError(
      'INSUFFICIENT_PERMISSIONS',
      `${task} requires ${access.permission} permission on ${access.resource}`,
      { details: { resource: access.resource, permission: access.permission } },
    )
}
