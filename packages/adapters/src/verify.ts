/** The framework-neutral part of the request-signing middleware: verify, or the refusal to answer. */
import {
  SignatureError,
  verifyRequest,
  type VerifiedRequest,
  type VerifyRequestOptions,
} from '@adwire/http-signatures'

/** Options of the request-signing middleware: the verifier's, plus where the signed URL lives. */
export interface SignedRequestOptions extends VerifyRequestOptions {
  /** The scheme and host the buyer signed (`@target-uri`). Default: `http://` and the `Host` header. */
  readonly origin?: string
  /** Largest body read, bytes (413 beyond). Default 1 MiB. */
  readonly maxBodyBytes?: number
}

export const DEFAULT_MAX_BODY = 1024 * 1024

// Key sources that could not be reached: the caller may retry, so 503 rather than 401.
const RETRYABLE = new Set([
  'request_signature_jwks_unavailable',
  'request_signature_capabilities_unreachable',
  'request_signature_brand_json_unreachable',
  'key_source_unavailable',
])

export type Verification =
  | { readonly ok: true; readonly result: VerifiedRequest }
  | {
      readonly ok: false
      readonly status: number
      readonly headers: Record<string, string>
      readonly body: unknown
    }

/** Verifies one request; a signature failure becomes the 401 (or 503) answer with the spec code. */
export async function verifyOrRefuse(
  message: { method: string; url: string; headers: Headers; body: Uint8Array | undefined },
  options: SignedRequestOptions,
): Promise<Verification> {
  try {
    return { ok: true, result: await verifyRequest(message, options) }
  } catch (error) {
    if (!(error instanceof SignatureError)) throw error
    const retryable = RETRYABLE.has(error.code)
    return {
      ok: false,
      status: retryable ? 503 : 401,
      headers: retryable ? { 'retry-after': '5' } : { 'www-authenticate': error.wwwAuthenticate },
      body: {
        error: {
          code: error.code,
          message: error.message,
          recovery: retryable ? 'transient' : 'correctable',
        },
      },
    }
  }
}

export const tooLarge = (limit: number) => ({
  ok: false as const,
  status: 413,
  headers: {},
  body: { error: { code: 'payload_too_large', message: `request bodies are limited to ${limit} bytes` } },
})

/** The request URL on `origin` (default `http://<Host>`). */
export const urlOf = (origin: string | undefined, host: string | undefined, path: string | undefined) =>
  `${(origin ?? `http://${host ?? '127.0.0.1'}`).replace(/\/+$/, '')}${path ?? '/'}`
