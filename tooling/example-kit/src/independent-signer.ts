/**
 * An RFC 9421 webhook signer written from the AdCP webhook profile with node:crypto and structured-headers
 * only, sharing no code with @adwire/http-signatures: if both disagreed on the wire format, the examples'
 * tests would fail.
 */
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto'
import { serializeDictionary, serializeInnerList, type InnerList } from 'structured-headers'

export interface IndependentKey {
  readonly kid: string
  readonly privateKey: KeyObject
  /** The public JWK as a seller publishes it. */
  readonly publicJwk: Record<string, unknown>
}

/** A fresh Ed25519 webhook-signing key. */
export function independentKey(kid: string): IndependentKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const exported = publicKey.export({ format: 'jwk' })
  return {
    kid,
    privateKey,
    publicJwk: {
      ...exported,
      kid,
      alg: 'EdDSA',
      use: 'sig',
      key_ops: ['verify'],
      adcp_use: 'webhook-signing',
    },
  }
}

const COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type', 'content-digest']

/** Headers for a POST of `body` to `url`: Content-Type, Content-Digest, Signature-Input, Signature. */
export function independentlySigned(key: IndependentKey, url: string, body: string): Record<string, string> {
  const target = new URL(url)
  const created = Math.floor(Date.now() / 1000)
  const contentType = 'application/json'
  const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
  const params = new Map<string, string | number>([
    ['created', created],
    ['expires', created + 300],
    ['nonce', randomUUID()],
    ['keyid', key.kid],
    ['alg', 'ed25519'],
    ['tag', 'adcp/webhook-signing/v1'],
  ])
  const innerList: InnerList = [COMPONENTS.map((component) => [component, new Map()]), params]
  const values: Record<string, string> = {
    '@method': 'POST',
    '@target-uri': target.href,
    '@authority': target.host,
    'content-type': contentType,
    'content-digest': digest,
  }
  const base = [
    ...COMPONENTS.map((component) => `"${component}": ${values[component]}`),
    `"@signature-params": ${serializeInnerList(innerList)}`,
  ].join('\n')
  // The webhook profile's v1 encoding: unpadded base64url between the colons.
  const signature = sign(null, Buffer.from(base), key.privateKey).toString('base64url')
  return {
    'content-type': contentType,
    'content-digest': digest,
    'signature-input': serializeDictionary(new Map([['sig1', innerList]])),
    signature: `sig1=:${signature}:`,
  }
}
