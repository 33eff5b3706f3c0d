import { SignatureError } from './errors.js'
import type { AdcpJwk, Jwks } from './types.js'

/** The key types AdCP signing allows. */
export type KeyAlgorithm = 'ed25519' | 'es256'

export interface GenerateSigningKeyOptions {
  readonly alg: KeyAlgorithm
  /** The key id published in the JWKS and sent as the `keyid` signature parameter. */
  readonly kid: string
  /** Published purpose. Webhook and request signing keys use `request-signing` (the default). */
  readonly adcpUse?: string
}

/** A new key pair: the private JWK to keep secret and the public JWKS to publish at the agent's `jwks_uri`. */
export interface GeneratedSigningKey {
  readonly privateJwk: AdcpJwk
  readonly publicJwk: AdcpJwk
  readonly jwks: Jwks
}

/**
 * Generates an Ed25519 or ES256 signing key with WebCrypto, shaped as AdCP publishes keys: `use: "sig"`,
 * `key_ops: ["verify"]` (`["sign"]` on the private half), `alg` `EdDSA` or `ES256`, and `adcp_use`.
 *
 * @example
 * const { privateJwk, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'seller-2026-01' })
 */
export async function generateSigningKey(options: GenerateSigningKeyOptions): Promise<GeneratedSigningKey> {
  if (!/^[\x21-\x7e]{1,128}$/.test(options.kid) || options.kid.includes('"') || options.kid.includes('\\')) {
    throw new SignatureError(
      'key_source_invalid',
      'kid must be 1 to 128 printable ASCII characters without quotes or backslashes',
    )
  }
  const algorithm =
    options.alg === 'ed25519'
      ? { name: 'Ed25519' }
      : options.alg === 'es256'
        ? { name: 'ECDSA', namedCurve: 'P-256' }
        : undefined
  if (!algorithm)
    throw new SignatureError(
      'key_source_invalid',
      `unsupported algorithm "${String(options.alg)}"; use ed25519 or es256`,
    )
  const pair = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as {
    privateKey: Awaited<ReturnType<typeof crypto.subtle.importKey>>
  }
  const exported = await crypto.subtle.exportKey('jwk', pair.privateKey)
  const base = {
    kid: options.kid,
    kty: exported.kty!,
    crv: exported.crv!,
    x: exported.x!,
    ...(exported.y ? { y: exported.y } : {}),
    alg: options.alg === 'ed25519' ? 'EdDSA' : 'ES256',
    use: 'sig',
    adcp_use: options.adcpUse ?? 'request-signing',
  }
  const publicJwk: AdcpJwk = { ...base, key_ops: ['verify'] }
  const privateJwk: AdcpJwk = { ...base, d: exported.d!, key_ops: ['sign'] }
  return { privateJwk, publicJwk, jwks: { keys: [publicJwk] } }
}
