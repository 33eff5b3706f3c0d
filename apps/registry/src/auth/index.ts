/**
 * Authentication for the registry: organization API keys (`sk_…`, stored as SHA-256 hashes) and an OAuth 2.1
 * authorization server (authorization code + PKCE S256, dynamic client registration, rotating refresh
 * tokens, ES256 JWT access tokens) whose users are members of an organization.
 *
 * Sign-in on a self-hosted mirror: the consent page asks for an email and the organization's API key. A valid
 * key proves membership of that organization; the user (email + organization) is recorded and becomes the
 * token's subject. There are no passwords to manage; revoking the key stops new sign-ins.
 */
import type BetterSqlite3 from 'better-sqlite3'
import type { Hono } from 'hono'
import type { JWK } from 'jose'
import type pg from 'pg'
import { authDb } from './db.js'
import { verifyAccessToken, type IssuerSettings } from './grants.js'
import { createOrg as storeOrg, orgForApiKey, type CreatedOrg, type Principal } from './identities.js'
import { authRoutes } from './routes.js'
import { looksLikeApiKey } from './secrets.js'
import { loadOrCreateSigningKey } from './signing-key.js'

export { migrateAuthPostgres, migrateAuthSqlite } from './db.js'
export type { CreatedOrg, Principal } from './identities.js'

/** Where the auth tables live: one SQLite database, or one schema of a PostgreSQL database. */
export type AuthStore =
  { kind: 'sqlite'; db: BetterSqlite3.Database } | { kind: 'postgres'; pool: pg.Pool; schema: string }

export interface AuthOptions {
  /** The registry's public base URL (no trailing slash needed); tokens are issued for `${issuer}/api`. */
  issuer: string
  /** The clock, epoch milliseconds. Defaults to `Date.now`. */
  now?: () => number
}

export interface Auth {
  /** The authorization server endpoints; mount at `/`. */
  routes: Hono
  /**
   * Who sent `request`: an organization API key or a user access token in `Authorization: Bearer`. Resolves to
   * `undefined` when there is no credential or it is invalid, revoked or expired.
   */
  authenticate(request: Request): Promise<Principal | undefined>
  /** Creates an organization with its first API key (shown once). */
  createOrg(name: string): Promise<CreatedOrg>
  /** The registry's public signing keys (the JWKS of `/.well-known/jwks.json`). */
  publicKeys(): Promise<JWK[]>
}

/**
 * Creates the auth module on migrated tables (`migrateAuthSqlite` / `migrateAuthPostgres` first).
 * @example
 * migrateAuthSqlite(db)
 * const auth = createAuth({ kind: 'sqlite', db }, { issuer: 'http://127.0.0.1:4100' })
 * app.route('/', auth.routes)
 * const principal = await auth.authenticate(c.req.raw)
 */
export function createAuth(store: AuthStore, options: AuthOptions): Auth {
  const db = authDb(store)
  const now = options.now ?? Date.now
  const issuer = options.issuer.replace(/\/+$/, '')
  const audience = `${issuer}/api`
  let pending: Promise<IssuerSettings> | undefined
  const settings = (): Promise<IssuerSettings> => {
    pending ??= loadOrCreateSigningKey(db, now()).then(
      (key) => ({ issuer, audience, key }),
      (error: unknown) => {
        pending = undefined
        throw error
      },
    )
    return pending
  }
  return {
    routes: authRoutes({ db, settings, issuer, audience, now }),
    publicKeys: async () => [(await settings()).key.publicJwk],
    async authenticate(request) {
      const header = request.headers.get('authorization') ?? ''
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      if (!match) return undefined
      const credential = match[1]!
      if (looksLikeApiKey(credential)) {
        const org = await orgForApiKey(db, credential)
        return org ? { kind: 'org', id: org.id, orgId: org.id, orgName: org.name } : undefined
      }
      if (credential.split('.').length !== 3) return undefined
      const user = await verifyAccessToken(db, await settings(), credential, now())
      return user ? { kind: 'user', id: user.userId, orgId: user.orgId, orgName: user.orgName } : undefined
    },
    createOrg: (name) => storeOrg(db, name, now()),
  }
}
