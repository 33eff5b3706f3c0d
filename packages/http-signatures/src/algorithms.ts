import type { KeyObject, webcrypto } from 'node:crypto'
import { base64UrlByteLength } from './base64.js'
import { nodeCrypto } from './crypto-backend.js'
import { derToP1363, p1363ToDer } from './ecdsa-der.js'
import type { AdcpJwk, SignatureAlgorithm } from './types.js'

/** RFC 9421 `alg` names by JWK `alg` (security.mdx "Algorithm naming — JWK vs RFC 9421"). */
const BY_JWK_ALG: Readonly<Record<string, SignatureAlgorithm>> = {
  EdDSA: 'ed25519',
  ES256: 'ecdsa-p256-sha256',
}
const SHAPES: Readonly<Record<SignatureAlgorithm, { kty: string; crv: string; jwkAlg: string }>> = {
  ed25519: { kty: 'OKP', crv: 'Ed25519', jwkAlg: 'EdDSA' },
  'ecdsa-p256-sha256': { kty: 'EC', crv: 'P-256', jwkAlg: 'ES256' },
}

/**
 * Whether a name is on the AdCP allowlist (`ed25519`, `ecdsa-p256-sha256`; checklist step 4).
 *
 * @example
 * isAllowedAlgorithm('rsa-pss-sha512') // false
 */
export function isAllowedAlgorithm(name: string): name is SignatureAlgorithm {
  return name === 'ed25519' || name === 'ecdsa-p256-sha256'
}

/**
 * The RFC 9421 algorithm a JWK is for, from `kty`/`crv` and, when present, `alg`; `undefined` when they are
 * inconsistent (`alg: EdDSA` on an EC key) or not an AdCP type.
 *
 * @example
 * algorithmOfJwk({ kid: 'k', kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', x: '...' }) // 'ed25519'
 */
export function algorithmOfJwk(jwk: AdcpJwk): SignatureAlgorithm | undefined {
  const fromShape =
    jwk.kty === 'OKP' && jwk.crv === 'Ed25519'
      ? 'ed25519'
      : jwk.kty === 'EC' && jwk.crv === 'P-256'
        ? 'ecdsa-p256-sha256'
        : undefined
  if (fromShape === undefined) return undefined
  if (jwk.alg !== undefined && BY_JWK_ALG[jwk.alg] !== fromShape) return undefined
  return fromShape
}

/**
 * Why a JWK cannot carry signatures of `algorithm`, or `undefined` when it can: `kty`/`crv`/`alg` must match
 * the algorithm (request vector 025) and the public coordinates must be 32-byte base64url values. With
 * `requirePrivate`, `d` must be one too.
 *
 * @example
 * keyShapeProblem({ kid: 'k', kty: 'EC', crv: 'P-256', alg: 'EdDSA', x: '...' }, 'ed25519') // 'JWK alg ...'
 */
export function keyShapeProblem(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  requirePrivate = false,
): string | undefined {
  const shape = SHAPES[algorithm]
  if (jwk.kty !== shape.kty || jwk.crv !== shape.crv)
    return `JWK is ${String(jwk.kty)}/${String(jwk.crv)}, not ${shape.kty}/${shape.crv} for ${algorithm}`
  if (jwk.alg !== undefined && jwk.alg !== shape.jwkAlg)
    return `JWK alg "${String(jwk.alg)}" does not match ${algorithm}`
  const coordinates = algorithm === 'ed25519' ? [jwk.x] : [jwk.x, jwk.y]
  if (requirePrivate) coordinates.push(jwk.d)
  for (const value of coordinates) {
    if (typeof value !== 'string' || base64UrlByteLength(value) !== 32)
      return 'JWK key material is not 32-byte base64url'
  }
  return undefined
}

/** An imported key: a node:crypto KeyObject on the fast path, else a WebCrypto CryptoKey. */
type Imported = { readonly node: KeyObject } | { readonly web: webcrypto.CryptoKey }
/** A public key imported into node:crypto. */
interface NodeVerifyKey {
  readonly node: KeyObject
}
const byObject = {
  sign: new WeakMap<object, Promise<Imported>>(),
  verify: new WeakMap<object, Promise<Imported>>(),
}
const byMembers = new Map<string, Promise<Imported>>()
const nodeVerifyByObject = new WeakMap<object, NodeVerifyKey>()
const nodeVerifyByMembers = new Map<string, NodeVerifyKey>()
const CACHE_LIMIT = 1024

/** The cache key of a JWK: its identifying members, and `d` for a private key. */
function membersId(jwk: AdcpJwk, usage: 'sign' | 'verify'): string {
  return [jwk.kid, jwk.kty, jwk.crv, jwk.x, jwk.y, usage === 'sign' ? jwk.d : ''].join('\u0000')
}

/** Only the algorithm members reach the importer; `adcp_use`, `key_ops` and test-only members are left behind. */
function jwkMembers(jwk: AdcpJwk, usage: 'sign' | 'verify'): webcrypto.JsonWebKey {
  const members: webcrypto.JsonWebKey = { kty: jwk.kty, crv: jwk.crv!, x: jwk.x! }
  if (jwk.y !== undefined) members.y = jwk.y
  if (usage === 'sign') members.d = jwk.d!
  return members
}

/**
 * A public JWK imported into node:crypto, synchronously, cached by the JWK object (WeakMap) and by its
 * identifying members (a resolver that hands out fresh objects still hits the cache). Throws when the key does
 * not import; failures are not cached. Only called when node:crypto is present.
 */
function nodeVerifyKey(jwk: AdcpJwk): NodeVerifyKey {
  const cached = nodeVerifyByObject.get(jwk)
  if (cached) return cached
  const id = membersId(jwk, 'verify')
  let entry = nodeVerifyByMembers.get(id)
  if (!entry) {
    const members = jwkMembers(jwk, 'verify') as Record<string, string>
    const node = nodeCrypto!.createPublicKey({ key: members, format: 'jwk' })
    entry = { node }
    if (nodeVerifyByMembers.size >= CACHE_LIMIT)
      nodeVerifyByMembers.delete(nodeVerifyByMembers.keys().next().value!)
    nodeVerifyByMembers.set(id, entry)
  }
  nodeVerifyByObject.set(jwk, entry)
  return entry
}

/**
 * Imports a key once and caches it: by the JWK object (WeakMap) and by its identifying members (kid, kty, crv,
 * x, y, and whether private), so a resolver that hands out fresh objects still hits the cache.
 */
function importKey(jwk: AdcpJwk, algorithm: SignatureAlgorithm, usage: 'sign' | 'verify'): Promise<Imported> {
  const cached = byObject[usage].get(jwk)
  if (cached) return cached
  const id = membersId(jwk, usage)
  let imported = byMembers.get(id)
  if (!imported) {
    imported = load(jwk, algorithm, usage)
    imported.catch(() => byMembers.delete(id))
    if (byMembers.size >= CACHE_LIMIT) byMembers.delete(byMembers.keys().next().value!)
    byMembers.set(id, imported)
  }
  byObject[usage].set(jwk, imported)
  return imported
}

async function load(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  usage: 'sign' | 'verify',
): Promise<Imported> {
  const members = jwkMembers(jwk, usage)
  if (nodeCrypto) {
    const key = { key: members as Record<string, string>, format: 'jwk' as const }
    return { node: usage === 'sign' ? nodeCrypto.createPrivateKey(key) : nodeCrypto.createPublicKey(key) }
  }
  const params = algorithm === 'ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', namedCurve: 'P-256' }
  return { web: await crypto.subtle.importKey('jwk', members, params, false, [usage]) }
}

/**
 * {@link verifyBytes} without a promise, on node:crypto: the check runs inline and the answer comes back at
 * once (`false` for a wrong signature, a wrong length or a key that does not import). `undefined` when the
 * runtime has no node:crypto: call {@link verifyBytes} (WebCrypto) then. `data` is read only during the call,
 * so a caller may reuse its buffer afterwards.
 *
 * @example
 * const valid = verifyBytesNow(jwk, 'ed25519', data, signature) ?? (await verifyBytes(jwk, 'ed25519', data, signature))
 */
export function verifyBytesNow(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  data: Uint8Array,
  signature: Uint8Array,
): boolean | undefined {
  if (!nodeCrypto) return undefined
  if (signature.length !== 64) return false
  try {
    const key = nodeVerifyKey(jwk)
    // The KeyObject itself, never an options object (see ecdsa-der.ts): ECDSA's P1363 signature goes as DER.
    return algorithm === 'ed25519'
      ? nodeCrypto.verify(null, data, key.node, signature)
      : nodeCrypto.verify('sha256', data, key.node, p1363ToDer(signature))
  } catch {
    return false
  }
}

/**
 * Verifies an RFC 9421 signature over the signature base bytes: Ed25519, or ECDSA P-256/SHA-256 with the
 * IEEE P1363 `r‖s` encoding (RFC 9421 §3.3.4). Resolves `false` for a wrong signature, a wrong length or a
 * key that does not import; never rejects. On node:crypto, `offload` runs the check on the libuv thread pool
 * (other work proceeds meanwhile, several checks use several cores); without it the check runs inline, which
 * is faster when nothing else is waiting. Without node:crypto, WebCrypto.
 *
 * @example
 * await verifyBytes(jwk, 'ed25519', new TextEncoder().encode(base), signature)
 */
export async function verifyBytes(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  data: Uint8Array,
  signature: Uint8Array,
  options: { readonly offload?: boolean } = {},
): Promise<boolean> {
  if (signature.length !== 64) return false
  try {
    if (nodeCrypto) {
      if (options.offload !== true) return verifyBytesNow(jwk, algorithm, data, signature)!
      const node = nodeCrypto
      const imported = nodeVerifyKey(jwk)
      const hash = algorithm === 'ed25519' ? null : 'sha256'
      const bytes = algorithm === 'ed25519' ? signature : p1363ToDer(signature)
      return await new Promise<boolean>((resolve) =>
        node.verify(hash, data, imported.node, bytes, (error, valid) => resolve(!error && valid)),
      )
    }
    const imported = (await importKey(jwk, algorithm, 'verify')) as { readonly web: webcrypto.CryptoKey }
    const params = algorithm === 'ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', hash: 'SHA-256' }
    return await crypto.subtle.verify(
      params,
      imported.web,
      signature as webcrypto.BufferSource,
      data as webcrypto.BufferSource,
    )
  } catch {
    return false
  }
}

/**
 * Signs signature base bytes with a private JWK (`d` present): 64 bytes, Ed25519 or P1363 `r‖s` ECDSA.
 *
 * @example
 * const signature = await signBytes(privateJwk, 'ed25519', new TextEncoder().encode(base))
 */
export async function signBytes(
  jwk: AdcpJwk,
  algorithm: SignatureAlgorithm,
  data: Uint8Array,
): Promise<Uint8Array> {
  const imported = await importKey(jwk, algorithm, 'sign')
  if ('node' in imported) {
    // The KeyObject itself, never an options object (see ecdsa-der.ts): ECDSA's DER signature goes back to P1363.
    if (algorithm !== 'ed25519') return derToP1363(nodeCrypto!.sign('sha256', data, imported.node))
    const signature = nodeCrypto!.sign(null, data, imported.node)
    return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength)
  }
  const params = algorithm === 'ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', hash: 'SHA-256' }
  return new Uint8Array(await crypto.subtle.sign(params, imported.web, data as webcrypto.BufferSource))
}
