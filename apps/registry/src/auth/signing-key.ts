/**
 * The access-token signing key: an ES256 key pair generated on first start and kept in
 * `registry_auth_signing_keys`, so every instance on the same database signs and verifies with it.
 */
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose'
import type { AuthDb } from './db.js'
import { randomToken } from './secrets.js'

export const ACCESS_TOKEN_ALG = 'ES256'

export interface SigningKey {
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly publicJwk: JWK
}

interface KeyRow {
  kid: string
  private_jwk: string
  public_jwk: string
}

/**
 * Loads the oldest stored signing key, generating and storing one when there is none. Two instances starting
 * together may both generate; the insert is keyed on a random kid and both then load the same oldest key.
 */
export async function loadOrCreateSigningKey(db: AuthDb, now: number): Promise<SigningKey> {
  const select = `SELECT kid, private_jwk, public_jwk FROM {signing_keys} ORDER BY created_at, kid LIMIT 1`
  let row = await db.one<KeyRow>(select)
  if (!row) {
    const { privateKey, publicKey } = await generateKeyPair(ACCESS_TOKEN_ALG, { extractable: true })
    const kid = randomToken(12)
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ACCESS_TOKEN_ALG, use: 'sig' }
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ACCESS_TOKEN_ALG }
    await db.run(
      `INSERT INTO {signing_keys} (kid, alg, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)`,
      [kid, ACCESS_TOKEN_ALG, JSON.stringify(privateJwk), JSON.stringify(publicJwk), now],
    )
    row = await db.one<KeyRow>(select)
    if (!row) throw new Error('the auth signing key could not be stored')
  }
  const privateKey = (await importJWK(JSON.parse(row.private_jwk) as JWK, ACCESS_TOKEN_ALG)) as CryptoKey
  return { kid: row.kid, privateKey, publicJwk: JSON.parse(row.public_jwk) as JWK }
}
