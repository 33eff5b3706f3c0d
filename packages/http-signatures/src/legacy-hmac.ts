/**
 * The deprecated HMAC-SHA256 webhook scheme (AdCP 3.x; removed in 4.0): `X-ADCP-Signature: sha256=<hex>` over
 * `"{X-ADCP-Timestamp}.{raw body}"`, keyed with the shared secret's ASCII bytes. Selected only when the buyer
 * registered `authentication` with `HMAC-SHA256`; never tried as a fallback for RFC 9421.
 */
import { constantTimeEqual } from './constant-time.js'
import { SignatureError } from './errors.js'
import { fieldValue, normalizeHeaders } from './headers.js'
import { findDuplicateKeys, sanitizeKeyNamesForLog } from './json-duplicates.js'
import type { HeaderInput } from './types.js'

/** The headers HMAC signing adds. */
export type HmacHeaders = {
  readonly 'X-ADCP-Signature': string
  readonly 'X-ADCP-Timestamp': string
}

export interface HmacOptions {
  /** The registration's `credentials`: at least 32 characters, used as its ASCII bytes. */
  readonly secret: string
  /** Unix seconds; defaults to the clock. */
  readonly now?: number
}

export interface HmacVerifyOptions {
  /** The current secret, or the current and the previous one during a rotation (at most five minutes). */
  readonly secret: string | readonly string[]
  readonly now?: number
  /** Largest accepted |now − timestamp|, seconds. Default 300. */
  readonly maxSkewSeconds?: number
  /** Reject a body with duplicate JSON object keys after the HMAC passes (`webhook_body_malformed`). Default true. */
  readonly checkBody?: boolean
}

const encoder = new TextEncoder()
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>
type Bytes = Parameters<typeof crypto.subtle.sign>[2]
const keys = new Map<string, Promise<CryptoKey>>()
const SIGNATURE = /^sha256=([0-9a-f]{64})$/

/**
 * Throws `webhook_credential_invalid` for a secret that is shorter than 32 characters or has no entropy
 * (one repeated character). Call it when a registration is saved, before anything is signed.
 */
export function assertHmacSecret(secret: string): void {
  if (typeof secret !== 'string' || secret.length < 32) {
    throw new SignatureError('webhook_credential_invalid', 'an HMAC secret needs at least 32 characters')
  }
  if (/^(.)\1*$/su.test(secret)) {
    throw new SignatureError(
      'webhook_credential_invalid',
      'an HMAC secret must not repeat a single character',
    )
  }
}

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret)
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ])
    if (keys.size > 256) keys.clear()
    keys.set(secret, key)
  }
  return key
}

const bytesOf = (body: string | Uint8Array | null | undefined) =>
  body === null || body === undefined
    ? new Uint8Array()
    : typeof body === 'string'
      ? encoder.encode(body)
      : body

function signedBytes(timestamp: string, body: Uint8Array): Uint8Array {
  const prefix = encoder.encode(`${timestamp}.`)
  const out = new Uint8Array(prefix.length + body.length)
  out.set(prefix)
  out.set(body, prefix.length)
  return out
}

const toHex = (buffer: ArrayBuffer) =>
  [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('')

/**
 * Signs a body exactly as it will be sent. Refuses (`duplicate_key_input`) a body with duplicate JSON object
 * keys at any depth, since the receiver could read it differently than the caller meant.
 *
 * @example
 * const body = JSON.stringify(payload) // compact, serialised once
 * await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(await signHmacWebhook(body, { secret })) } })
 */
export async function signHmacWebhook(body: string | Uint8Array, options: HmacOptions): Promise<HmacHeaders> {
  assertHmacSecret(options.secret)
  const bytes = bytesOf(body)
  const { duplicates } = findDuplicateKeys(new TextDecoder().decode(bytes))
  if (duplicates.length > 0) {
    throw new SignatureError(
      'duplicate_key_input',
      `body has duplicate keys: ${sanitizeKeyNamesForLog(duplicates).join(', ')}`,
    )
  }
  const timestamp = String(Math.floor(options.now ?? Date.now() / 1000))
  const mac = await crypto.subtle.sign(
    'HMAC',
    await hmacKey(options.secret),
    signedBytes(timestamp, bytes) as Bytes,
  )
  return { 'X-ADCP-Signature': `sha256=${toHex(mac)}`, 'X-ADCP-Timestamp': timestamp }
}

/**
 * Verifies a legacy HMAC-SHA256 webhook: both headers present, a numeric timestamp within ±300 s, a
 * `sha256=` + 64 lowercase hex signature, the MAC (constant time, by WebCrypto's verify), then no duplicate
 * keys in the body. Resolves with the timestamp or rejects with a {@link SignatureError}.
 */
export async function verifyHmacWebhook(
  message: { readonly headers: HeaderInput; readonly body?: string | Uint8Array | null },
  options: HmacVerifyOptions,
): Promise<{ timestamp: number }> {
  const fields = normalizeHeaders(message.headers)
  const signature = fieldValue(fields, 'x-adcp-signature')
  const timestamp = fieldValue(fields, 'x-adcp-timestamp')
  if (!signature || timestamp === undefined) {
    throw new SignatureError('webhook_hmac_missing', 'X-ADCP-Signature and X-ADCP-Timestamp are required')
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new SignatureError('webhook_hmac_timestamp_invalid', 'X-ADCP-Timestamp must be Unix seconds')
  }
  const now = Math.floor(options.now ?? Date.now() / 1000)
  if (Math.abs(now - Number(timestamp)) > (options.maxSkewSeconds ?? 300)) {
    throw new SignatureError(
      'webhook_hmac_timestamp_invalid',
      'X-ADCP-Timestamp is outside the accepted window',
    )
  }
  const match = SIGNATURE.exec(signature)
  if (!match)
    throw new SignatureError(
      'webhook_hmac_malformed',
      'X-ADCP-Signature must be sha256= and 64 lowercase hex digits',
    )
  const mac = new Uint8Array(match[1]!.match(/../g)!.map((pair) => parseInt(pair, 16)))
  const bytes = bytesOf(message.body)
  const data = signedBytes(timestamp, bytes)
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret
  let valid = false
  for (const secret of secrets) {
    assertHmacSecret(secret)
    if (await crypto.subtle.verify('HMAC', await hmacKey(secret), mac as Bytes, data as Bytes)) valid = true
  }
  if (!valid) throw new SignatureError('webhook_hmac_invalid', 'X-ADCP-Signature does not match the body')
  if (options.checkBody ?? true) {
    const { duplicates } = findDuplicateKeys(new TextDecoder().decode(bytes))
    if (duplicates.length > 0) {
      throw new SignatureError(
        'webhook_body_malformed',
        `body has duplicate keys: ${sanitizeKeyNamesForLog(duplicates).join(', ')}`,
        14,
      )
    }
  }
  return { timestamp: Number(timestamp) }
}

/**
 * Verifies the deprecated Bearer scheme: `Authorization: Bearer <credentials>` compared in constant time.
 * It carries no body integrity; prefer RFC 9421.
 */
export async function verifyBearerWebhook(
  headers: HeaderInput,
  token: string | readonly string[],
): Promise<void> {
  const value = fieldValue(normalizeHeaders(headers), 'authorization')
  const match = value === undefined ? null : /^Bearer ([!-~]+)$/i.exec(value.trim())
  let valid = false
  for (const candidate of typeof token === 'string' ? [token] : token) {
    if (await constantTimeEqual(match?.[1] ?? '', candidate)) valid = valid || match !== null
  }
  if (!valid) throw new SignatureError('webhook_bearer_invalid', 'missing or wrong bearer credential')
}

/** The `Authorization` header for the deprecated Bearer scheme. */
export function bearerHeaders(token: string): { Authorization: string } {
  assertHmacSecret(token)
  return { Authorization: `Bearer ${token}` }
}
