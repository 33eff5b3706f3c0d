/**
 * The agent's RFC 9421 signing key (webhooks it sends): a private JWK from SIGNING_KEY_JWK, or an Ed25519 key
 * generated at the first start and kept in the database, so every instance and every restart signs with the
 * same key. Its public half is published in the JWKS that brand.json points at.
 */
import { publishedJwk, signerJwk } from '@adwire/agent-server'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { algorithmOfJwk } from '@adwire/http-signatures/internal'
import type { Storage } from '@adwire/seller'

const SETTING = 'webhook_signing_jwk'

export interface SigningKey {
  readonly privateJwk: AdcpJwk
  readonly publicJwk: AdcpJwk
  readonly jwks: Jwks
  /** Where the key came from. */
  readonly source: 'env' | 'database' | 'generated'
  /** The RFC 9421 algorithm name, for get_adcp_capabilities. */
  readonly algorithm: 'ed25519' | 'ecdsa-p256-sha256'
}

/**
 * The public JWK of a private one, as AdCP publishes a webhook-signing key (`adcp_use: "webhook-signing"`:
 * verifiers written to the 3.0 rules refuse a request-signing key on a webhook).
 */
export function publicJwkOf(privateJwk: AdcpJwk): AdcpJwk {
  return publishedJwk(privateJwk, 'webhook-signing') as AdcpJwk
}

function keyFrom(privateJwk: AdcpJwk, source: SigningKey['source']): SigningKey {
  const algorithm = algorithmOfJwk(privateJwk)
  if (!algorithm || typeof privateJwk.d !== 'string')
    throw new Error(`the ${source} signing key is not an Ed25519 or P-256 private JWK`)
  const publicJwk = publicJwkOf(privateJwk)
  return {
    privateJwk: signerJwk(privateJwk, 'webhook-signing') as AdcpJwk,
    publicJwk,
    jwks: { keys: [publicJwk] },
    source,
    algorithm,
  }
}

/**
 * @example
 * const key = await resolveSigningKey(storage, env.signingKey)
 * createWebhookSender({ outbox: storage.outbox, key: key.privateJwk })
 */
export async function resolveSigningKey(
  storage: Storage,
  envJwk?: Record<string, unknown>,
): Promise<SigningKey> {
  if (envJwk) return keyFrom(envJwk as unknown as AdcpJwk, 'env')
  const stored = await storage.getSetting(SETTING)
  if (stored) return keyFrom(JSON.parse(stored) as AdcpJwk, 'database')
  const kid = `sales-agent-${new Date().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`
  const generated = await generateSigningKey({ alg: 'ed25519', kid, adcpUse: 'webhook-signing' })
  const text = JSON.stringify(generated.privateJwk)
  const winner = await storage.putSettingIfAbsent(SETTING, text)
  return keyFrom(JSON.parse(winner) as AdcpJwk, winner === text ? 'generated' : 'database')
}
