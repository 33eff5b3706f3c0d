import { SignatureError } from '../errors.js'
import { isObject } from './json-document.js'

/** The `identity.key_origins` purposes a transport verifier checks: request signatures or webhook deliveries. */
export type SigningPurpose = 'request_signing' | 'webhook_signing'

/** What a `get_adcp_capabilities` response says about one signing purpose. */
export interface SigningPosture {
  /** `identity.brand_json_url`: the trust-root pointer (https, or http when insecure URLs are allowed). */
  readonly brandJsonUrl: string
  /** `identity.key_origins[purpose]` exactly as declared, when present. */
  readonly keyOrigin?: string
  /** The capability field that declares signing for the purpose (`request_signing.supported_for`), if any. */
  readonly posture?: string
}

/** Options of {@link readSigningPosture}. */
export interface ReadSigningPostureOptions {
  /** Accept an `http:` `brand_json_url` (development against loopback servers only). Default false. */
  readonly allowInsecure?: boolean
}

const REQUEST_LISTS = [
  'supported_for',
  'required_for',
  'protocol_methods_supported_for',
  'protocol_methods_required_for',
] as const

/**
 * The capability field that declares signing for a purpose, or `undefined` when none does. Request signing:
 * a non-empty `request_signing.supported_for`, `required_for`, `protocol_methods_supported_for` or
 * `protocol_methods_required_for` (the schema's `purpose_anchoring` list; security.mdx names the first two).
 * Webhook signing: `webhook_signing.supported === true`.
 *
 * @example
 * declaredPosture({ webhook_signing: { supported: true } }, 'webhook_signing') // 'webhook_signing.supported'
 */
export function declaredPosture(
  capabilities: Record<string, unknown>,
  purpose: SigningPurpose,
): string | undefined {
  if (purpose === 'webhook_signing') {
    const block = capabilities.webhook_signing
    return isObject(block) && block.supported === true ? 'webhook_signing.supported' : undefined
  }
  const block = capabilities.request_signing
  if (!isObject(block)) return undefined
  const list = REQUEST_LISTS.find((name) => Array.isArray(block[name]) && block[name].length > 0)
  return list === undefined ? undefined : `request_signing.${list}`
}

/**
 * Steps 2 and the input of step 7 of the `brand_json_url` bootstrap (AdCP 3.1 security.mdx, "Discovering an
 * agent's signing keys via brand_json_url"): reads `identity.brand_json_url` and `identity.key_origins[purpose]`
 * from a `get_adcp_capabilities` response.
 *
 * `brand_json_url` absent, not a string, not a URL or not https is `request_signature_brand_json_url_missing`.
 * The spec makes the field mandatory when the agent declares any signing posture; an agent that declares none
 * and has no `brand_json_url` gets the same code, because this bootstrap then has no trust root to read keys
 * from (the message says which case it is). A `key_origins` entry that is present but not a string is treated
 * as a declared origin that cannot match (`request_signature_key_origin_mismatch` at step 7).
 *
 * @throws {SignatureError} `request_signature_brand_json_url_missing`
 * @example
 * readSigningPosture(capabilities, 'request_signing')
 * // { brandJsonUrl: 'https://seller.example/.well-known/brand.json', keyOrigin: 'https://keys.seller.example', posture: 'request_signing.supported_for' }
 */
export function readSigningPosture(
  capabilities: Record<string, unknown>,
  purpose: SigningPurpose,
  options: ReadSigningPostureOptions = {},
): SigningPosture {
  const identity = isObject(capabilities.identity) ? capabilities.identity : {}
  const origins = isObject(identity.key_origins) ? identity.key_origins : undefined
  const url = identity.brand_json_url
  const schemes = options.allowInsecure ? ['https:', 'http:'] : ['https:']
  if (typeof url !== 'string' || !URL.canParse(url) || !schemes.includes(new URL(url).protocol)) {
    const signing =
      declaredPosture(capabilities, 'request_signing') ??
      declaredPosture(capabilities, 'webhook_signing') ??
      (origins !== undefined && Object.keys(origins).length > 0 ? 'identity.key_origins' : undefined)
    const problem = url === undefined ? 'is absent' : 'is not an https URL'
    const context =
      signing === undefined
        ? 'and the agent declares no signing posture, so there is no trust root to read keys from'
        : `although the agent declares ${signing}`
    throw new SignatureError(
      'request_signature_brand_json_url_missing',
      `identity.brand_json_url ${problem} ${context}`,
      7,
    )
  }
  const declared = origins?.[purpose]
  const posture = declaredPosture(capabilities, purpose)
  return {
    brandJsonUrl: url,
    ...(declared === undefined ? {} : { keyOrigin: typeof declared === 'string' ? declared : '' }),
    ...(posture === undefined ? {} : { posture }),
  }
}

/**
 * Step 7 of the `brand_json_url` bootstrap: the host of the resolved `jwks_uri` must equal the host of
 * `identity.key_origins[purpose]`.
 *
 * - An entry is present: its host (name and any non-default port, compared after URL parsing, so case and a
 *   trailing dot do not matter) must equal the `jwks_uri` host, else `request_signature_key_origin_mismatch`.
 * - No entry while the capabilities declare signing for the purpose: `request_signature_key_origin_missing`.
 *   This applies whether `key_origins` lacks only this purpose or is absent altogether: the notes (security.mdx
 *   step 7) say "signing declared without the origin entry", and the schema marks the check
 *   `key_origins_consistency: mandatory_when_signing`. (The `key_origins` description's "absent means shared
 *   origin" reads as a 3.x courtesy the verifier algorithm does not grant; we follow the algorithm and fail
 *   closed.)
 * - No entry and no signing declared for the purpose: nothing to check.
 *
 * Publisher `adagents.json` pins are the one exemption in the spec; they do not come through this path.
 *
 * @throws {SignatureError} `request_signature_key_origin_mismatch`, `request_signature_key_origin_missing`
 * @example
 * assertKeyOrigin('request_signing', posture, 'https://keys.seller.example/.well-known/jwks.json')
 */
export function assertKeyOrigin(purpose: SigningPurpose, posture: SigningPosture, jwksUri: string): void {
  if (posture.keyOrigin === undefined) {
    if (posture.posture === undefined) return
    throw new SignatureError(
      'request_signature_key_origin_missing',
      `purpose ${purpose}: the agent declares ${posture.posture} but no identity.key_origins.${purpose}`,
      7,
    )
  }
  const expected = hostOf(posture.keyOrigin)
  const actual = hostOf(jwksUri)
  if (expected !== undefined && expected === actual) return
  throw new SignatureError(
    'request_signature_key_origin_mismatch',
    `purpose ${purpose}: expected origin ${expected ?? JSON.stringify(posture.keyOrigin)}, ` +
      `actual origin ${actual ?? jwksUri} (the resolved jwks_uri)`,
    7,
  )
}

/** `host[:port]` of a URL, lowercased, default port dropped, trailing dot of the name removed. */
function hostOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined
  const { hostname, port } = new URL(url)
  if (hostname === '') return undefined
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
  return port === '' ? name : `${name}:${port}`
}
