/**
 * Authorization codes, rotating refresh tokens and JWT access tokens. Codes and refresh tokens are stored as
 * SHA-256 hashes; each code starts a refresh-token family, and presenting a spent code or an already rotated
 * refresh token revokes the whole family (OAuth 2.1 §4.3.1 replay protection): its refresh tokens and the access
 * tokens issued from it, which carry the family as their `sid` claim and stop verifying once it is revoked.
 */
import { createLocalJWKSet, jwtVerify, SignJWT, type JWK } from 'jose'
import type { AuthDb } from './db.js'
import { findUser } from './identities.js'
import { pkceMatches, randomToken, sha256Hex } from './secrets.js'
import { ACCESS_TOKEN_ALG, type SigningKey } from './signing-key.js'

/** Lifetimes, milliseconds. */
export const CODE_TTL_MS = 10 * 60_000
export const ACCESS_TOKEN_TTL_MS = 60 * 60_000
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000

/** Scopes this server grants (the same as the hosted registry advertises). */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email'] as const

/** A token-endpoint error (RFC 6749 §5.2). */
export class GrantError extends Error {
  constructor(
    readonly code: 'invalid_grant' | 'invalid_request' | 'invalid_scope',
    message: string,
  ) {
    super(message)
  }
}

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

export interface IssuerSettings {
  issuer: string
  /** The protected resource (token audience): `${issuer}/api`. */
  audience: string
  key: SigningKey
}

/** Stores a new authorization code and returns it. */
export async function createCode(
  db: AuthDb,
  grant: { clientId: string; userId: string; redirectUri: string; codeChallenge: string; scope: string },
  now: number,
): Promise<string> {
  const code = randomToken(32)
  await db.run(
    `INSERT INTO {codes} (code_hash, client_id, user_id, redirect_uri, code_challenge, scope, family_id, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      sha256Hex(code),
      grant.clientId,
      grant.userId,
      grant.redirectUri,
      grant.codeChallenge,
      grant.scope,
      randomToken(16),
      now + CODE_TTL_MS,
    ],
  )
  return code
}

interface CodeRow {
  client_id: string
  user_id: string
  redirect_uri: string
  code_challenge: string
  scope: string
  family_id: string
  expires_at: number | string
}

/**
 * Redeems an authorization code. The code is spent by the first attempt, successful or not; a second
 * presentation revokes the tokens issued from it.
 */
export async function redeemCode(
  db: AuthDb,
  settings: IssuerSettings,
  input: {
    code: string
    clientId: string
    redirectUri: string | undefined
    codeVerifier: string | undefined
  },
  now: number,
): Promise<TokenResponse> {
  const hash = sha256Hex(input.code)
  const row = await db.one<CodeRow>(
    `SELECT client_id, user_id, redirect_uri, code_challenge, scope, family_id, expires_at
     FROM {codes} WHERE code_hash = ?`,
    [hash],
  )
  if (!row || row.client_id !== input.clientId)
    throw new GrantError('invalid_grant', 'unknown authorization code')
  const spent =
    (await db.run(`UPDATE {codes} SET used_at = ? WHERE code_hash = ? AND used_at IS NULL`, [now, hash])) ===
    0
  if (spent) {
    await revokeFamily(db, row.family_id, now)
    throw new GrantError('invalid_grant', 'the authorization code was already used; its tokens are revoked')
  }
  if (Number(row.expires_at) <= now)
    throw new GrantError('invalid_grant', 'the authorization code has expired')
  if (input.redirectUri !== row.redirect_uri) {
    throw new GrantError('invalid_grant', 'redirect_uri does not match the authorization request')
  }
  if (!input.codeVerifier) throw new GrantError('invalid_request', 'code_verifier is required (PKCE)')
  if (!pkceMatches(input.codeVerifier, row.code_challenge)) {
    throw new GrantError('invalid_grant', 'code_verifier does not match the code_challenge')
  }
  return issueTokens(
    db,
    settings,
    { clientId: row.client_id, userId: row.user_id, familyId: row.family_id, scope: row.scope },
    now,
  )
}

interface RefreshRow {
  family_id: string
  client_id: string
  user_id: string
  scope: string
  expires_at: number | string
  rotated_at: number | string | null
  revoked_at: number | string | null
}

/** Exchanges a refresh token for a new access token and a new refresh token; the old one stops working. */
export async function rotateRefreshToken(
  db: AuthDb,
  settings: IssuerSettings,
  input: { refreshToken: string; clientId: string; scope?: string | undefined },
  now: number,
): Promise<TokenResponse> {
  const hash = sha256Hex(input.refreshToken)
  const row = await db.one<RefreshRow>(
    `SELECT family_id, client_id, user_id, scope, expires_at, rotated_at, revoked_at
     FROM {refresh_tokens} WHERE token_hash = ?`,
    [hash],
  )
  if (!row || row.client_id !== input.clientId) throw new GrantError('invalid_grant', 'unknown refresh token')
  if (row.revoked_at !== null) throw new GrantError('invalid_grant', 'the refresh token was revoked')
  if (Number(row.expires_at) <= now) throw new GrantError('invalid_grant', 'the refresh token has expired')
  const rotated =
    (await db.run(
      `UPDATE {refresh_tokens} SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL`,
      [now, hash],
    )) === 1
  if (!rotated) {
    await revokeFamily(db, row.family_id, now)
    throw new GrantError(
      'invalid_grant',
      'the refresh token was already used; every token of this grant is revoked',
    )
  }
  let scope = row.scope
  if (input.scope !== undefined) {
    const requested = input.scope.split(' ').filter(Boolean)
    const granted = new Set(row.scope.split(' '))
    if (requested.some((item) => !granted.has(item))) {
      throw new GrantError('invalid_scope', 'a refresh may only narrow the granted scope')
    }
    scope = requested.join(' ')
  }
  if (!(await findUser(db, row.user_id))) throw new GrantError('invalid_grant', 'the user no longer exists')
  return issueTokens(
    db,
    settings,
    { clientId: row.client_id, userId: row.user_id, familyId: row.family_id, scope },
    now,
  )
}

async function revokeFamily(db: AuthDb, familyId: string, now: number): Promise<void> {
  await db.run(`UPDATE {refresh_tokens} SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL`, [
    now,
    familyId,
  ])
}

async function issueTokens(
  db: AuthDb,
  settings: IssuerSettings,
  grant: { clientId: string; userId: string; familyId: string; scope: string },
  now: number,
): Promise<TokenResponse> {
  const user = await findUser(db, grant.userId)
  if (!user) throw new GrantError('invalid_grant', 'the user no longer exists')
  const refreshToken = `rt_${randomToken(32)}`
  await db.run(
    `INSERT INTO {refresh_tokens} (token_hash, family_id, client_id, user_id, scope, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      sha256Hex(refreshToken),
      grant.familyId,
      grant.clientId,
      grant.userId,
      grant.scope,
      now,
      now + REFRESH_TOKEN_TTL_MS,
    ],
  )
  const seconds = Math.floor(now / 1000)
  const accessToken = await new SignJWT({
    scope: grant.scope,
    client_id: grant.clientId,
    org_id: user.org_id,
    // The grant (refresh-token family) the token comes from: revoking the family revokes the token.
    sid: grant.familyId,
  })
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: settings.key.kid, typ: 'at+jwt' })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject(grant.userId)
    .setIssuedAt(seconds)
    .setExpirationTime(seconds + ACCESS_TOKEN_TTL_MS / 1000)
    .setJti(randomToken(16))
    .sign(settings.key.privateKey)
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_MS / 1000,
    refresh_token: refreshToken,
    scope: grant.scope,
  }
}

/** The JWKS document publishing the access-token verification key. */
export function jwks(key: SigningKey): { keys: JWK[] } {
  return { keys: [key.publicJwk] }
}

const keySets = new WeakMap<SigningKey, ReturnType<typeof createLocalJWKSet>>()

function keySet(key: SigningKey): ReturnType<typeof createLocalJWKSet> {
  let found = keySets.get(key)
  if (!found) {
    found = createLocalJWKSet(jwks(key))
    keySets.set(key, found)
  }
  return found
}

/** Whether the grant (refresh-token family) `familyId` was revoked: a replayed code or refresh token. */
async function familyRevoked(db: AuthDb, familyId: string): Promise<boolean> {
  const row = await db.one<{ family_id: string }>(
    `SELECT family_id FROM {refresh_tokens} WHERE family_id = ? AND revoked_at IS NOT NULL LIMIT 1`,
    [familyId],
  )
  return row !== undefined
}

/**
 * Verifies an access token (signature, `typ`, issuer, audience, expiry at `now`), that its grant was not revoked
 * (a token without its grant's `sid` is refused) and that its user still exists. Resolves to the user and organization ids (and the organization's name), or `undefined` for any invalid token.
 */
export async function verifyAccessToken(
  db: AuthDb,
  settings: IssuerSettings,
  token: string,
  now: number,
): Promise<{ userId: string; orgId: string; orgName: string } | undefined> {
  try {
    const { payload } = await jwtVerify(token, keySet(settings.key), {
      issuer: settings.issuer,
      audience: settings.audience,
      algorithms: [ACCESS_TOKEN_ALG],
      typ: 'at+jwt',
      currentDate: new Date(now),
    })
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return undefined
    if (await familyRevoked(db, payload.sid)) return undefined
    const user = await findUser(db, payload.sub)
    if (!user || user.org_id !== payload.org_id) return undefined
    return { userId: user.id, orgId: user.org_id, orgName: user.org_name }
  } catch {
    return undefined
  }
}
