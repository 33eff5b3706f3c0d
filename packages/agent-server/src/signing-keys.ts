/**
 * Signing keys by purpose (security.mdx §Key purpose): an agent signs its webhooks with a key whose JWK says
 * `"adcp_use": "webhook-signing"` and its outbound requests with a separate `"request-signing"` key. Verifiers
 * written to the 3.0 rules reject a request-signing key on a webhook; 3.1 verifiers accept both on webhooks, so
 * the webhook-signing key satisfies each. Both public halves go in the one JWKS that brand.json points at,
 * and `get_adcp_capabilities` names each purpose's origin in `identity.key_origins`.
 */

/** A JWK as AdCP publishes it (private members stripped for publication). */
export type Jwk = Readonly<Record<string, unknown>> & { readonly kid?: string; readonly kty?: string }

/** The `adcp_use` values an agent signs with. */
export type KeyPurpose = 'webhook-signing' | 'request-signing'

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const

/**
 * The public JWK to publish for a private key and its purpose: private members removed, `use: "sig"`,
 * `key_ops: ["verify"]`, `alg` (`EdDSA` for OKP, `ES256` otherwise, unless set) and `adcp_use` = `purpose`
 * (whatever the private JWK said).
 *
 * @example
 * publishedJwk(webhookKey.privateJwk, 'webhook-signing') // { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' }
 */
export function publishedJwk(privateJwk: Jwk, purpose: KeyPurpose): Jwk {
  const rest: Record<string, unknown> = { ...privateJwk }
  for (const member of PRIVATE_MEMBERS) delete rest[member]
  return {
    ...rest,
    alg: typeof privateJwk.alg === 'string' ? privateJwk.alg : privateJwk.kty === 'OKP' ? 'EdDSA' : 'ES256',
    use: 'sig',
    key_ops: ['verify'],
    adcp_use: purpose,
  }
}

/** The private JWK a signer uses for `purpose`: `adcp_use` and `key_ops: ["sign"]` set. */
export function signerJwk(privateJwk: Jwk, purpose: KeyPurpose): Jwk {
  return { ...privateJwk, key_ops: ['sign'], adcp_use: purpose }
}

/**
 * The JWKS publishing one key per purpose. A kid may name one key only (AdCP: a kid must not collide with any
 * other entry, whatever its `adcp_use`), so the two keys must differ in kid: a TypeError otherwise.
 *
 * @example
 * signingJwks({ 'webhook-signing': webhookPrivateJwk, 'request-signing': requestPrivateJwk })
 */
export function signingJwks(keys: Readonly<Partial<Record<KeyPurpose, Jwk>>>): { keys: Jwk[] } {
  const published = (Object.entries(keys) as [KeyPurpose, Jwk | undefined][])
    .filter((entry): entry is [KeyPurpose, Jwk] => entry[1] !== undefined)
    .map(([purpose, jwk]) => publishedJwk(jwk, purpose))
  const kids = published.map((jwk) => jwk.kid)
  if (new Set(kids).size !== kids.length)
    throw new TypeError('each signing purpose needs its own key: two keys share a kid')
  return { keys: published }
}

/**
 * The `get_adcp_capabilities` `identity` block (`protocol/get-adcp-capabilities-response.json`): the
 * brand.json trust root and `key_origins` naming the origin of the JWKS for each purpose. It is only valid
 * with an `https://` brand.json URL (the schema's pattern, and the 3.x rule that `key_origins` requires
 * `brand_json_url`), so a plain-http development agent gets `undefined`: omit the block then.
 *
 * @example
 * identityCapabilities({ brandJsonUrl: 'https://agent.example/.well-known/brand.json', jwksUrl: 'https://agent.example/.well-known/jwks.json', purposes: ['webhook-signing', 'request-signing'] })
 * // { brand_json_url: 'https://agent.example/.well-known/brand.json', key_origins: { webhook_signing: 'https://agent.example', request_signing: 'https://agent.example' } }
 */
export function identityCapabilities(options: {
  readonly brandJsonUrl: string
  readonly jwksUrl: string
  readonly purposes: readonly KeyPurpose[]
}): { brand_json_url: string; key_origins: Record<string, string> } | undefined {
  if (!options.brandJsonUrl.startsWith('https://') || !options.jwksUrl.startsWith('https://'))
    return undefined
  const origin = new URL(options.jwksUrl).origin
  const key_origins: Record<string, string> = {}
  for (const purpose of options.purposes)
    key_origins[purpose === 'webhook-signing' ? 'webhook_signing' : 'request_signing'] = origin
  return { brand_json_url: options.brandJsonUrl, key_origins }
}
