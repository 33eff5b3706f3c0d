/**
 * Signed requests (AdCP 3.1 security.mdx, "Signed Requests" and the seller-side verifier checklist): every
 * POST to `/mcp` and `/a2a` goes through `verifyRequest` from `@adwire/http-signatures` before the transport
 * sees it. A verified signature names the caller (`context.verifiedSigner`); an unsigned call to an operation in
 * `required_for` without another accepted credential, a malformed signature or a failed one is refused with
 * `401` and `WWW-Authenticate: Signature error="<code>"`, as a JSON-RPC error carrying the AdCP error.
 */
import {
  SignatureError,
  verifyRequest,
  type KeySource,
  type ReplayStore,
  type RequestProfileVersion,
  type RequestSigningCapability,
  type RevocationInput,
} from '@adwire/http-signatures'
import type { VerifiedSigner } from './types.js'
import { isRecord } from '@adwire/schemas/json'
import { adcpRpcErrorResponse } from './rpc-answer.js'

/** Options of request-signature verification (`createAgentServer({ requestSigning })`). */
export interface RequestSigningOptions {
  /** The buyers' keys: a JWKS, or a resolver (brand.json, the capabilities bootstrap, pins…) naming the signer. */
  readonly keys: KeySource
  /** Nonce replay cache (steps 9a, 12, 13); share one across instances. */
  readonly replayStore: ReplayStore
  /**
   * What this agent advertises as `request_signing` in get_adcp_capabilities: `required_for`, `warn_for`,
   * `supported_for` and their `protocol_methods_*` twins, `covers_content_digest`.
   */
  readonly capability?: RequestSigningCapability
  /** Signature encoding and digest rules: `3.1` (default, the AdCP 3.1 profile) or `3.2`. */
  readonly profile?: RequestProfileVersion
  /** Revoked keyids or a revocation list (step 9). */
  readonly revocation?: RevocationInput
}

/** The outcome of {@link checkRequestSignature}: the request goes on (with its signer), or this answer. */
export type SignatureCheck =
  | { readonly ok: true; readonly signer?: VerifiedSigner }
  | { readonly ok: false; readonly response: Response }

/** Codes a caller may retry (the keys could not be fetched); every other one is terminal. */
const RETRYABLE = new Set([
  'request_signature_jwks_unavailable',
  'request_signature_capabilities_unreachable',
  'request_signature_brand_json_unreachable',
  'key_source_unavailable',
])

/**
 * Verifies the signature of one request to a JSON-RPC endpoint. `hasOtherCredential` says whether its bearer
 * credential authenticated (an unsigned call to a `required_for` operation is then let through, as the
 * composition rules ask).
 *
 * @example
 * const check = await checkRequestSignature(request, options, { hasOtherCredential: false, now: Date.now() / 1000, transport: 'mcp' })
 * if (!check.ok) return check.response
 */
export async function checkRequestSignature(
  request: Request,
  options: RequestSigningOptions,
  call: {
    readonly hasOtherCredential: boolean
    readonly now: number
    /** The endpoint: on `a2a` the operation is the skill of the message's DataPart. */
    readonly transport: 'mcp' | 'a2a'
  },
): Promise<SignatureCheck> {
  const body = new Uint8Array(await request.clone().arrayBuffer())
  const skill = call.transport === 'a2a' ? a2aSkill(body) : undefined
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  try {
    const result = await verifyRequest(
      { method: request.method, url: request.url, headers, body },
      {
        keys: options.keys,
        replayStore: options.replayStore,
        profile: options.profile ?? '3.1',
        ...(options.capability ? { capability: options.capability } : {}),
        ...(options.revocation ? { revocation: options.revocation } : {}),
        hasOtherCredential: call.hasOtherCredential,
        now: call.now,
        ...(skill === undefined ? {} : { operation: skill }),
      },
    )
    if (result.status !== 'verified') return { ok: true }
    return {
      ok: true,
      signer: {
        keyid: result.keyid,
        ...(result.signer === undefined ? {} : { agent_url: result.signer }),
        verified_at: Math.floor(call.now),
      },
    }
  } catch (error) {
    if (!SignatureError.is(error)) throw error
    return { ok: false, response: refusal(error, body) }
  }
}

/**
 * The AdCP operation of an A2A message send: the `skill` of its DataPart (A2A 1.0 `parts[].data`, 0.3
 * `parts[].kind: 'data'`); undefined for other JSON-RPC methods (`tasks/get`…), judged by their method name.
 */
function a2aSkill(body: Uint8Array): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(body))
  } catch {
    return undefined
  }
  if (!isRecord(parsed) || !isRecord(parsed.params) || !isRecord(parsed.params.message)) return undefined
  const parts = parsed.params.message.parts
  if (!Array.isArray(parts)) return undefined
  for (const part of parts) {
    if (isRecord(part) && isRecord(part.data) && typeof part.data.skill === 'string') return part.data.skill
  }
  return undefined
}

/** The JSON-RPC id of the request body, so that the client matches the error to its call. */
function requestId(body: Uint8Array): unknown {
  try {
    return (JSON.parse(new TextDecoder().decode(body)) as { id?: unknown }).id
  } catch {
    return null
  }
}

function refusal(error: SignatureError, body: Uint8Array): Response {
  const retryable = RETRYABLE.has(error.code)
  const adcpError = {
    code: error.code,
    message: error.message,
    recovery: retryable ? 'transient' : 'correctable',
  }
  return adcpRpcErrorResponse(requestId(body), -32001, adcpError, {
    status: retryable ? 503 : 401,
    headers: retryable ? { 'retry-after': '5' } : { 'www-authenticate': `Signature error="${error.code}"` },
  })
}
