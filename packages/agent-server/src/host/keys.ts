/**
 * An agent host's RFC 9421 signing keys, one per purpose (security.mdx §Key purpose): the webhook-signing key
 * signs the webhooks it sends, an optional request-signing key the requests it makes. Each is a private JWK
 * from the environment or an Ed25519 key generated at the first start and kept in the settings table, so every
 * instance and every restart signs with the same keys. The JWKS publishes both public halves.
 */
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { algorithmOfJwk } from '@adwire/http-signatures/internal'
import { publishedJwk, signerJwk, signingJwks, type KeyPurpose } from '../signing-keys.js'
import type { SettingsStore } from './settings.js'

/** The settings rows holding generated keys. */
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

/** The host's keys and the one JWKS publishing them. */
export interface SigningKeys {
  readonly webhook: SigningKey
  /** Present when {@link SigningKeyOptions.requestSigning} asked for it. */
  readonly request?: SigningKey
  readonly jwks: Jwks
}

export interface SigningKeyOptions {
  /** The start of generated kids (`{prefix}-{date}-{random}`; the request key's `{prefix}-requests-…`). */
  readonly kidPrefix: string
  /** The webhook-signing private JWK from the environment; unset: the stored one, else a generated one. */
  readonly webhookJwk?: Record<string, unknown>
  /** A request-signing key too, from `jwk` when given (another key, another kid). */
  readonly requestSigning?: { readonly jwk?: Record<string, unknown> }
}

function keyFrom(privateJwk: AdcpJwk, source: SigningKey['source'], purpose: KeyPurpose): SigningKey {
  const algorithm = algorithmOfJwk(privateJwk)
  if (!algorithm || typeof privateJwk.d !== 'string')
    throw new Error(`the ${source} ${purpose} key is not an Ed25519 or P-256 private JWK`)
  return {
    purpose,
    privateJwk: signerJwk(privateJwk, purpose) as AdcpJwk,
    publicJwk: publishedJwk(privateJwk, purpose) as AdcpJwk,
    source,
    algorithm,
  }
}

/**
 * The key for one purpose: `envJwk`, else the one kept in the settings table, else a new Ed25519 key (the first
 * instance to store it wins).
 *
 * @example
 * const key = await resolveSigningKey(storage, 'webhook-signing', { kidPrefix: 'sales-agent', jwk: env.signingKey })
 * createWebhookSender({ outbox: storage.outbox, key: key.privateJwk })
 */
export async function resolveSigningKey(
  settings: SettingsStore,
  purpose: KeyPurpose,
  options: { readonly kidPrefix: string; readonly jwk?: Record<string, unknown> | undefined },
): Promise<SigningKey> {
  if (options.jwk) return keyFrom(options.jwk as unknown as AdcpJwk, 'env', purpose)
  const setting = SETTINGS[purpose]
  const stored = await settings.getSetting(setting)
  if (stored) return keyFrom(JSON.parse(stored) as AdcpJwk, 'database', purpose)
  const kid = `${options.kidPrefix}-${new Date().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`
  const generated = await generateSigningKey({ alg: 'ed25519', kid, adcpUse: purpose })
  const text = JSON.stringify(generated.privateJwk)
  const winner = await settings.putSettingIfAbsent(setting, text)
  return keyFrom(JSON.parse(winner) as AdcpJwk, winner === text ? 'generated' : 'database', purpose)
}

/**
 * The webhook-signing key, the request-signing key when asked for, and the JWKS publishing them (their kids
 * must differ).
 *
 * @example
 * const keys = await resolveSigningKeys(storage, { kidPrefix: 'creative-agent', webhookJwk: env.signingKey, requestSigning: { jwk: env.requestSigningKey } })
 * keys.jwks // { keys: [webhook public JWK, request public JWK] }
 */
export async function resolveSigningKeys(
  settings: SettingsStore,
  options: SigningKeyOptions,
): Promise<SigningKeys> {
  const webhook = await resolveSigningKey(settings, 'webhook-signing', {
    kidPrefix: options.kidPrefix,
    jwk: options.webhookJwk,
  })
  const request = options.requestSigning
    ? await resolveSigningKey(settings, 'request-signing', {
        kidPrefix: `${options.kidPrefix}-requests`,
        jwk: options.requestSigning.jwk,
      })
    : undefined
  const jwks = signingJwks({
    'webhook-signing': webhook.privateJwk,
    ...(request ? { 'request-signing': request.privateJwk } : {}),
  }) as unknown as Jwks
  return { webhook, ...(request ? { request } : {}), jwks }
}
