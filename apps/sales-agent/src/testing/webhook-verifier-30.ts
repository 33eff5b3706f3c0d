/**
 * Test helper (not part of the build): a minimal buyer-side webhook verifier written to the AdCP 3.0 rules,
 * independent of @adwire/http-signatures and @adwire/webhooks, to judge the sales agent's signatures from outside.
 * The 3.0 webhook-signing profile (RFC 9421): `Signature-Input` label `sig1` covering `@method`, `@target-uri`,
 * `@authority`, `content-type` and `content-digest`, with `created`, `expires` (at most 300 s later), `nonce`,
 * `keyid`, `alg` (`ed25519` or `ecdsa-p256-sha256`) and `tag="adcp/webhook-signing/v1"`; `Signature` an unpadded
 * base64url byte sequence; the key found by `keyid` in the JWKS that the signer's brand.json names
 * (`agents[].jwks_uri`), with `use: "sig"`, `key_ops` holding `verify` and — the 3.0 rule 3.1 relaxed —
 * `adcp_use: "webhook-signing"` (a request-signing key may not sign webhooks); `Content-Digest` the SHA-256 of the
 * raw body; each `(keyid, nonce)` accepted once. Delivery reports, whose 3.1.19 `reporting_webhook` requires a legacy
 * `authentication`, are checked to the 3.0 HMAC-SHA256 rules ({@link verifyHmac30}). Node's crypto does the
 * cryptography.
 */
import {
  createHash,
  createHmac,
  createPublicKey,
  timingSafeEqual,
  verify,
  type JsonWebKey,
} from 'node:crypto'

export const WEBHOOK_TAG = 'adcp/webhook-signing/v1'
const COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type', 'content-digest']
const ALGS = new Set(['ed25519', 'ecdsa-p256-sha256'])

/** A delivery as the buyer's HTTP server saw it. */
export interface RawDelivery {
  method: string
  /** The full target URI the sender posted to. */
  url: string
  headers: Record<string, string>
  body: Buffer
}

/** A refusal, with the webhook error code of the profile. */
export class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`)
  }
}

interface SignatureParams {
  components: string[]
  /** The serialized inner list with its parameters, as signed (`@signature-params`). */
  serialized: string
  params: Record<string, string | number>
}

/** Parses the `sig1` member of Signature-Input (an RFC 8941 inner list of strings with parameters). */
function parseSignatureInput(header: string): SignatureParams {
  const match = /(?:^|,)\s*sig1=(\(([^)]*)\)((?:;[a-z][a-z0-9_.*-]*=(?:"[^"\\]*"|-?\d+))*))\s*(?:,|$)/.exec(
    header,
  )
  if (!match) throw new Refused('webhook_signature_header_malformed', 'no sig1 member in Signature-Input')
  const components = [...match[2]!.matchAll(/"([^"\\]*)"/g)].map((item) => item[1]!)
  const params: Record<string, string | number> = {}
  for (const [, key, quoted, number] of match[3]!.matchAll(/;([a-z][a-z0-9_.*-]*)=(?:"([^"\\]*)"|(-?\d+))/g))
    params[key!] = quoted ?? Number(number)
  return { components, serialized: match[1]!, params }
}

function signatureBytes(header: string): Buffer {
  const match = /(?:^|,)\s*sig1=:([A-Za-z0-9_-]+):\s*(?:,|$)/.exec(header)
  if (!match)
    throw new Refused('webhook_signature_header_malformed', 'Signature sig1 is not unpadded base64url')
  return Buffer.from(match[1]!, 'base64url')
}

function componentValue(name: string, delivery: RawDelivery): string {
  const url = new URL(delivery.url)
  if (name === '@method') return delivery.method.toUpperCase()
  if (name === '@target-uri') return url.href
  if (name === '@authority') return url.host.toLowerCase()
  const value = delivery.headers[name]
  if (value === undefined) throw new Refused('webhook_signature_components_incomplete', `no ${name} header`)
  return value.trim()
}

/** Fetches the signer's keys the AdCP way: its brand.json, then the `jwks_uri` of its `agents[]` entry. */
export async function keysFromBrandJson(origin: string): Promise<JsonWebKey[]> {
  const brand = (await (await fetch(`${origin}/.well-known/brand.json`)).json()) as {
    agents?: { url?: string; jwks_uri?: string }[]
  }
  const jwksUri = brand.agents?.find((agent) => typeof agent.jwks_uri === 'string')?.jwks_uri
  if (!jwksUri) throw new Error('brand.json names no agents[].jwks_uri')
  // The agent publishes its public URL; the test reaches it on 127.0.0.1.
  const path = new URL(jwksUri).pathname
  const jwks = (await (await fetch(`${origin}${path}`)).json()) as { keys: JsonWebKey[] }
  return jwks.keys
}

/**
 * Verifies one delivery under the 3.0 webhook-signing rules; returns the keyid, or throws {@link Refused}.
 * @example const keyid = verifier.verify(delivery)
 */
export function createVerifier30(keys: readonly JsonWebKey[], now: () => number = () => Date.now() / 1000) {
  const seen = new Set<string>()
  return {
    verify(delivery: RawDelivery): string {
      const input = delivery.headers['signature-input']
      const signature = delivery.headers.signature
      if (!input || !signature)
        throw new Refused(
          'webhook_signature_header_malformed',
          'Signature-Input and Signature are both required',
        )
      const parsed = parseSignatureInput(input)
      const bytes = signatureBytes(signature)
      const { created, expires, nonce, keyid, alg, tag } = parsed.params
      if ([created, expires, nonce, keyid, alg, tag].some((value) => value === undefined))
        throw new Refused('webhook_signature_params_incomplete', JSON.stringify(parsed.params))
      if (tag !== WEBHOOK_TAG) throw new Refused('webhook_signature_tag_invalid', String(tag))
      if (!ALGS.has(String(alg))) throw new Refused('webhook_signature_alg_not_allowed', String(alg))
      const [from, to, at] = [Number(created), Number(expires), now()]
      if (to <= from || from > at + 60 || to < at - 60 || to - from > 300)
        throw new Refused('webhook_signature_window_invalid', `created ${from}, expires ${to}, now ${at}`)
      const missing = COMPONENTS.filter((name) => !parsed.components.includes(name))
      if (missing.length) throw new Refused('webhook_signature_components_incomplete', missing.join(', '))
      const jwk = keys.find((key) => (key as { kid?: string }).kid === keyid) as
        (JsonWebKey & { kid: string; use?: string; key_ops?: string[]; adcp_use?: string }) | undefined
      if (!jwk) throw new Refused('webhook_signature_key_unknown', String(keyid))
      if (jwk.use !== 'sig' || !jwk.key_ops?.includes('verify') || jwk.adcp_use !== 'webhook-signing')
        throw new Refused(
          'webhook_signature_key_purpose_invalid',
          `3.0 rule: use ${jwk.use}, key_ops ${String(jwk.key_ops)}, adcp_use ${String(jwk.adcp_use)}`,
        )
      const base = [
        ...parsed.components.map((name) => `"${name}": ${componentValue(name, delivery)}`),
        `"@signature-params": ${parsed.serialized}`,
      ].join('\n')
      const { adcp_use: _purpose, key_ops: _ops, use: _use, alg: _alg, ...material } = jwk
      const key = createPublicKey({ key: material, format: 'jwk' })
      const ok =
        alg === 'ed25519'
          ? verify(null, Buffer.from(base), key, bytes)
          : verify('sha256', Buffer.from(base), { key, dsaEncoding: 'ieee-p1363' }, bytes)
      if (!ok) throw new Refused('webhook_signature_invalid', `keyid ${String(keyid)}`)
      const digest = `sha-256=:${createHash('sha256').update(delivery.body).digest('base64')}:`
      if (delivery.headers['content-digest'] !== digest)
        throw new Refused('webhook_signature_digest_mismatch', String(delivery.headers['content-digest']))
      const replayKey = `${String(keyid)} ${String(nonce)}`
      if (seen.has(replayKey)) throw new Refused('webhook_signature_replayed', replayKey)
      seen.add(replayKey)
      return String(keyid)
    },
  }
}

/**
 * Verifies a legacy HMAC-SHA256 delivery to the 3.0 rules: `X-ADCP-Timestamp` (unix seconds, within 300 s) and
 * `X-ADCP-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{raw body}" keyed by the credentials' bytes>`.
 * @example verifyHmac30(delivery, secret)
 */
export function verifyHmac30(
  delivery: RawDelivery,
  secret: string,
  now: () => number = () => Date.now() / 1000,
): void {
  const timestamp = delivery.headers['x-adcp-timestamp']
  const signature = delivery.headers['x-adcp-signature']
  if (!timestamp || !signature)
    throw new Refused('hmac_headers_missing', 'X-ADCP-Timestamp and X-ADCP-Signature')
  if (!/^\d+$/.test(timestamp) || Math.abs(now() - Number(timestamp)) > 300)
    throw new Refused('hmac_timestamp_invalid', timestamp)
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), delivery.body]))
      .digest('hex')}`,
  )
  const got = Buffer.from(signature)
  if (got.length !== expected.length || !timingSafeEqual(got, expected))
    throw new Refused('hmac_signature_invalid', signature)
}
