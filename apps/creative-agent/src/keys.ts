/**
 * The agent's RFC 9421 signing keys, one per purpose (security.mdx §Key purpose): the webhook-signing key signs
 * the webhooks it sends (`adcp_use: "webhook-signing"`, which verifiers written to the 3.0 rules require and 3.1
 * verifiers accept), and a separate request-signing key (`adcp_use: "request-signing"`) signs the requests it
 * makes. Each is a private JWK from the environment (SIGNING_KEY_JWK, REQUEST_SIGNING_KEY_JWK) or an Ed25519
 * key generated at the first start and kept in the database, so every instance and every restart signs with the
 * same keys. Both public halves are published in the JWKS that brand.json points at.
 */
import { publishedJwk, signerJwk, signingJwks, type KeyPurpose } from '@adwire/agent-server'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { algorithmOfJwk } from '@adwire/http-signatures/internal'
import type { Storage } from './storage.js'

const SETTINGS: Record<KeyPurpose, string> = {
  'webhook-signing': 'webhook_signing_jwk',
  'request-signing': 'request_signing_jwk',
}

export interface SigningKey {
  /** What the key signs (its JWK's `adcp_use`). */
  readonly purpose: KeyPurpose
  readonly privateJwk: AdcpJwk
  readonly publicJwk: AdcpJwk
  /** Where the key came from. */
  readonly source: 'env' | 'database' | 'generated'
  /** The RFC 9421 algorithm name, for get_adcp_capabilities. */
  readonly algorithm: 'ed25519' | 'ecdsa-p256-sha256'
}

/** The agent's keys: webhooks and requests sign with different keys; one JWKS publishes both. */
export interface SigningKeys {
  readonly webhook: SigningKey
  readonly request: SigningKey
  readonly jwks: Jwks
}

/** The public JWK of a private one, shaped as AdCP publishes signing keys for `purpose`. */
export function publicJwkOf(privateJwk: AdcpJwk, purpose: KeyPurpose = 'webhook-signing'): AdcpJwk {
  return publishedJwk(privateJwk, purpose) as AdcpJwk
}

function keyFrom(privateJwk: AdcpJwk, source: SigningKey['source'], purpose: KeyPurpose): SigningKey {
  const algorithm = algorithmOfJwk(privateJwk)
  if (!algorithm || typeof privateJwk.d !== 'string')
    throw new Error(`the ${source} ${purpose} key is not an Ed25519 or P-256 private JWK`)
  return {
    purpose,
    privateJwk: signerJwk(privateJwk, purpose) as AdcpJwk,
    publicJwk: publicJwkOf(privateJwk, purpose),
    source,
    algorithm,
  }
}

/**
 * The key for one purpose: from the environment, else the one kept in the database, else a new Ed25519 key
 * (the first instance to store it wins).
 *
 * @example
 * const key = await resolveSigningKey(storage, env.signingKey)
 * createWebhookSender({ outbox: storage.outbox, key: key.privateJwk })
 */
export async function resolveSigningKey(
  storage: Storage,
  envJwk?: Record<string, unknown>,
  purpose: KeyPurpose = 'webhook-signing',
): Promise<SigningKey> {
  if (envJwk) return keyFrom(envJwk as unknown as AdcpJwk, 'env', purpose)
  const setting = SETTINGS[purpose]
  const stored = await storage.getSetting(setting)
  if (stored) return keyFrom(JSON.parse(stored) as AdcpJwk, 'database', purpose)
  const prefix = purpose === 'webhook-signing' ? 'creative-agent' : 'creative-agent-requests'
  const kid = `${prefix}-${new Date().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`
  const generated = await generateSigningKey({ alg: 'ed25519', kid, adcpUse: purpose })
  const text = JSON.stringify(generated.privateJwk)
  const winner = await storage.putSettingIfAbsent(setting, text)
  return keyFrom(JSON.parse(winner) as AdcpJwk, winner === text ? 'generated' : 'database', purpose)
}

/**
 * Both keys and the JWKS publishing them (their kids must differ).
 *
 * @example
 * const keys = await resolveSigningKeys(storage, env.signingKey, env.requestSigningKey)
 */
export async function resolveSigningKeys(
  storage: Storage,
  webhookJwk?: Record<string, unknown>,
  requestJwk?: Record<string, unknown>,
): Promise<SigningKeys> {
  const webhook = await resolveSigningKey(storage, webhookJwk, 'webhook-signing')
  const request = await resolveSigningKey(storage, requestJwk, 'request-signing')
  const jwks = signingJwks({
    'webhook-signing': webhook.privateJwk,
    'request-signing': request.privateJwk,
  }) as unknown as Jwks
  return { webhook, request, jwks }
}
