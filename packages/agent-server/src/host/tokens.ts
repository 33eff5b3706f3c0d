/**
 * Bearer tokens of an agent host: TOKENS parsed as `principal_id:token[:permissions]` entries, and the lookup
 * the task server authenticates with. Without TOKENS one token is generated at the first start (printed once by
 * the service) and only its SHA-256 is kept in the settings table, so every instance on the database accepts
 * it. Tokens are only ever held hashed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { hashedTokenLookup, type TokenLookup } from '../auth.js'
import type { Permission, Principal, Resource } from '../types.js'
import type { SettingsStore } from './settings.js'

/** One configured bearer token: the caller it authenticates and what it may do. */
export interface TokenGrant {
  readonly token: string
  readonly principal: Principal
}

/** The tokens a host accepts and where they came from. */
export interface ResolvedTokens {
  readonly lookup: TokenLookup
  /** `env`: TOKENS; `database`: the digest kept at an earlier start; `generated`: this start made one. */
  readonly source: 'env' | 'database' | 'generated'
  /** The token, when this start generated it (print it once); undefined otherwise. */
  readonly generated?: string
}

const PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'approve']
const TOKEN = /^[\x21-\x7e]{16,512}$/
const PRINCIPAL_ID = /^[A-Za-z0-9_.@-]{1,128}$/
/** The settings row holding the generated token's SHA-256 (hex). */
export const TOKEN_DIGEST_SETTING = 'default_token_sha256'

/**
 * Permissions text: `+`-joined items, each `permission` (on every one of `resources`) or `area.permission`
 * with an area among `resources`. Undefined when an item is unknown or the text is empty.
 *
 * @example
 * parsePermissions('reports.read+media_buys.write', ['media_buys', 'reports'])
 * // { reports: ['read'], media_buys: ['write'] }
 */
export function parsePermissions(
  text: string,
  resources: readonly Resource[],
): Principal['permissions'] | undefined {
  const granted: Partial<Record<Resource, Permission[]>> = {}
  const items = text.split('+').filter(Boolean)
  if (items.length === 0) return undefined
  for (const item of items) {
    const [first, second, ...rest] = item.split('.')
    if (rest.length > 0) return undefined
    const areas = second === undefined ? resources : [first as Resource]
    const permission = (second ?? first) as Permission
    if (!PERMISSIONS.includes(permission) || !areas.every((area) => resources.includes(area)))
      return undefined
    for (const area of areas) {
      const list = (granted[area] ??= [])
      if (!list.includes(permission)) list.push(permission)
    }
  }
  return granted
}

/** What {@link parseTokenGrants} read: the grants, and one sentence per bad entry (never the token). */
export interface ParsedTokens {
  readonly grants: TokenGrant[]
  readonly problems: string[]
}

/**
 * TOKENS: comma-separated `principal_id:token[:permissions]` (permissions as {@link parsePermissions} reads
 * them over `resources`; default `read+write`). Principal ids hold letters, digits, `_ . @ -`; tokens are 16 to
 * 512 printable ASCII characters without spaces, commas or colons, each listed once.
 *
 * @example
 * parseTokenGrants('buyer-1:tok_0123456789abcdef:read', ['creatives'])
 * // { grants: [{ token: 'tok_0123456789abcdef', principal: { principal_id: 'buyer-1', permissions: { creatives: ['read'] } } }], problems: [] }
 */
export function parseTokenGrants(value: string | undefined, resources: readonly Resource[]): ParsedTokens {
  const grants: TokenGrant[] = []
  const problems: string[] = []
  const seen = new Set<string>()
  for (const [index, entry] of (value ?? '').split(',').entries()) {
    const item = entry.trim()
    if (item === '') continue
    const [principalId, token, permissions, ...rest] = item.split(':')
    const problem = (message: string) => problems.push(`entry ${index + 1}: ${message}`)
    if (rest.length > 0 || !principalId || !token) problem('expected principal_id:token[:permissions]')
    else if (!PRINCIPAL_ID.test(principalId))
      problem('the principal id may hold letters, digits, _ . @ - (1 to 128)')
    else if (!TOKEN.test(token))
      problem('the token must be 16 to 512 printable ASCII characters without spaces, commas or colons')
    else {
      const granted = parsePermissions(permissions ?? 'read+write', resources)
      if (!granted)
        problem(
          `permissions are read, write, delete, approve (optionally area.permission) joined with +, not "${permissions ?? ''}"`,
        )
      else if (seen.has(token)) problem('the same token is listed twice')
      else {
        seen.add(token)
        grants.push({ token, principal: { principal_id: principalId, permissions: granted } })
      }
    }
  }
  return { grants, problems }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

export interface ResolveTokensOptions {
  /** The principal of a generated token. */
  readonly defaultPrincipal: Principal
  /** The generated token's prefix (`cat_`, `sat_`): tells an operator which agent a token is for. */
  readonly prefix: string
  /** Asked when no grant matches (test-kit keys, …). */
  readonly fallback?: TokenLookup
}

/**
 * The lookup over `grants` (TOKENS); with none, over the generated token, made and stored (as its digest) at
 * the first start. Two instances starting together agree: the first digest stored wins.
 *
 * @example
 * const tokens = await resolveTokens(storage, env.tokens, { prefix: 'cat_', defaultPrincipal })
 * if (tokens.generated) print(`TOKEN=${tokens.generated}`)
 * createAgentServer({ tasks, auth: { tokens: tokens.lookup }, … })
 */
export async function resolveTokens(
  settings: SettingsStore,
  grants: readonly TokenGrant[],
  options: ResolveTokensOptions,
): Promise<ResolvedTokens> {
  const { fallback } = options
  const withFallback = (lookup: TokenLookup): TokenLookup =>
    fallback ? async (token) => (await lookup(token)) ?? fallback(token) : lookup
  if (grants.length > 0) {
    const digests = new Map(grants.map((grant) => [sha256(grant.token), grant.principal]))
    return { lookup: withFallback(hashedTokenLookup(digests)), source: 'env' }
  }
  const lookupOf = (digest: string) =>
    withFallback(hashedTokenLookup(new Map([[digest, options.defaultPrincipal]])))
  const stored = await settings.getSetting(TOKEN_DIGEST_SETTING)
  if (stored) return { lookup: lookupOf(stored), source: 'database' }
  const token = `${options.prefix}${randomBytes(32).toString('base64url')}`
  const digest = sha256(token)
  const winner = await settings.putSettingIfAbsent(TOKEN_DIGEST_SETTING, digest)
  if (winner !== digest) return { lookup: lookupOf(winner), source: 'database' }
  return { lookup: lookupOf(digest), source: 'generated', generated: token }
}
