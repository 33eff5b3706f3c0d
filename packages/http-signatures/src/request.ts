import { hasBody } from './crypto-backend.js'
import { SignatureError } from './errors.js'
import { fail } from './failure.js'
import { normalizeHeaders } from './headers.js'
import { describeRequestOperation } from './request-operation.js'
import { signMessage, type SignedMessage, type SignOptions } from './sign-core.js'
import type { HttpMessage } from './types.js'
import {
  verifySignedMessage,
  type ProfileRules,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify-core.js'

/**
 * The request profile's `tag` (security.mdx "AdCP RFC 9421 profile").
 *
 * @example
 * parseSignatureInput(header, { profile: 'request' }).params.tag === REQUEST_TAG
 */
export const REQUEST_TAG = 'adcp/request-signing/v1'

/**
 * The request-signing profile version: `3.1` (3.0/3.1: unpadded base64url `Signature`, `content-digest` coverage
 * per `covers_content_digest`) or `3.2` (RFC 8941 `sf-binary` `Signature`, `content-digest` covered on every
 * request with a body).
 */
export type RequestProfileVersion = '3.1' | '3.2'

/** The verifier's `request_signing` capability block (get_adcp_capabilities), the parts verification uses. */
export interface RequestSigningCapability {
  /** 3.1 policy: `required` (must cover), `forbidden` (must not), `either` (default). */
  readonly covers_content_digest?: 'required' | 'forbidden' | 'either'
  /** AdCP operations whose unsigned calls are rejected unless another credential is presented. */
  readonly required_for?: readonly string[]
  /** AdCP operations in shadow mode: a failed signature is reported, the call rides on its other credential. */
  readonly warn_for?: readonly string[]
  readonly supported_for?: readonly string[]
  /** JSON-RPC methods (`tasks/cancel`) whose unsigned calls are rejected. */
  readonly protocol_methods_required_for?: readonly string[]
  readonly protocol_methods_warn_for?: readonly string[]
  readonly protocol_methods_supported_for?: readonly string[]
}

/** Options of {@link signRequest}. */
export interface SignRequestOptions extends SignOptions {
  /** Default `3.2`. */
  readonly profile?: RequestProfileVersion
  /** Cover `content-digest`. Default: when there is a body. Under 3.2 a body must be covered. */
  readonly coverContentDigest?: boolean
}

/** Options of {@link verifyRequest}. */
export interface VerifyRequestOptions extends VerifyOptions {
  readonly profile: RequestProfileVersion
  readonly capability?: RequestSigningCapability
  /** The AdCP operation (or, containing `/`, JSON-RPC method); default derived from the URL or the JSON-RPC body. */
  readonly operation?: string
  /** Whether the caller presented another credential this verifier accepts (bearer, API key, mTLS). */
  readonly hasOtherCredential?: boolean
}

/** The outcome of {@link verifyRequest}: signed and verified, accepted unsigned, or a shadow-mode failure. */
export type VerifiedRequest =
  | ({ readonly status: 'verified' } & VerifiedSignature)
  | { readonly status: 'unsigned'; readonly operation?: string; readonly protocolMethod?: string }
  | {
      readonly status: 'unverified'
      readonly error: SignatureError
      readonly operation?: string
      readonly protocolMethod?: string
    }

const BASE_COMPONENTS = ['@method', '@target-uri', '@authority'] as const

// One rules object per (version, content-digest policy), built on first use.
const rulesCache = new Map<string, ProfileRules>()

function requestRules(
  version: RequestProfileVersion,
  capability: RequestSigningCapability | undefined,
): ProfileRules {
  const policy = capability?.covers_content_digest ?? 'either'
  const id = `${version} ${String(policy)}`
  let rules = rulesCache.get(id)
  if (!rules) {
    rules = buildRequestRules(version, policy)
    // Two versions times three policies; the cap keeps odd values passed at run time from accumulating.
    if (rulesCache.size < 8) rulesCache.set(id, rules)
  }
  return rules
}

function buildRequestRules(
  version: RequestProfileVersion,
  policy: NonNullable<RequestSigningCapability['covers_content_digest']>,
): ProfileRules {
  return {
    profile: 'request',
    tag: REQUEST_TAG,
    encoding: version === '3.2' ? 'sf-binary' : 'base64url',
    defaultCap: 1_000_000,
    componentsProblem: (covered, hasBody) => {
      let missing: string[] | undefined
      for (const component of BASE_COMPONENTS)
        if (!covered.includes(component)) (missing ??= []).push(component)
      if (hasBody && !covered.includes('content-type')) (missing ??= []).push('content-type')
      const digest = covered.includes('content-digest')
      if (!digest && (policy === 'required' || (version === '3.2' && hasBody)))
        (missing ??= []).push('content-digest')
      if (missing !== undefined)
        return { kind: 'components_incomplete', message: `not covered: ${missing.join(', ')}` }
      if (digest && policy === 'forbidden' && version === '3.1') {
        return {
          kind: 'components_unexpected',
          message: 'content-digest is covered but the verifier forbids it',
        }
      }
      return undefined
    },
  }
}

/**
 * Signs an outbound AdCP request (RFC 9421, security.mdx "AdCP RFC 9421 profile"): covers `@method`,
 * `@target-uri`, `@authority`, plus `content-type` when there is a body and `content-digest` when asked (by
 * default when there is a body; always then under 3.2), with `tag="adcp/request-signing/v1"` under label
 * `sig1`. The `Signature` is unpadded base64url under `3.1` and RFC 8941 standard base64 under `3.2`.
 *
 * @example
 * const signed = await signRequest(
 *   { method: 'POST', url: 'https://seller.example/adcp/create_media_buy', headers: { 'content-type': 'application/json' }, body },
 *   { key: privateJwk, profile: '3.2' },
 * )
 */
export async function signRequest(message: HttpMessage, options: SignRequestOptions): Promise<SignedMessage> {
  const version = options.profile ?? '3.2'
  const withBody = hasBody(message.body)
  const digest = options.coverContentDigest ?? withBody
  if (version === '3.2' && withBody && !digest) {
    fail(
      'request',
      'components_incomplete',
      'AdCP 3.2 requires content-digest on every request with a body',
      6,
    )
  }
  const components = [
    ...BASE_COMPONENTS,
    ...(withBody ? ['content-type'] : []),
    ...(digest ? ['content-digest'] : []),
  ]
  const encoding = version === '3.2' ? 'sf-binary' : 'base64url'
  return signMessage(message, { profile: 'request', tag: REQUEST_TAG, encoding, components }, options)
}

/**
 * Verifies an inbound request with the seller-side checklist of security.mdx. Pre-checks first: an unsigned
 * request is `request_signature_required` when its operation is in `required_for` (or its JSON-RPC method in
 * `protocol_methods_required_for`) and no other credential was presented, or when it registers a webhook with
 * legacy `authentication`; otherwise it resolves `{ status: 'unsigned' }`. `Signature` without `Signature-Input`
 * (or the reverse) is `request_signature_header_malformed`, never a fallback to the other credential. Then
 * steps 1 to 14 with 9a as for webhooks, with `adcp_use` exactly `request-signing`. For an operation in
 * `warn_for`, a failed signature (other than a malformed header) on a call with another credential resolves
 * `{ status: 'unverified', error }`, establishing no signer identity.
 *
 * @example
 * const result = await verifyRequest(message, { keys, profile: '3.2', capability, replayStore, hasOtherCredential: bearerOk })
 * if (result.status === 'verified') context.verifiedSigner = { keyid: result.keyid, agentUrl: result.signer }
 */
export async function verifyRequest(
  message: HttpMessage,
  options: VerifyRequestOptions,
): Promise<VerifiedRequest> {
  if (typeof message !== 'object' || message === null)
    fail('request', 'header_malformed', 'no message to verify', 1)
  options ??= {} as VerifyRequestOptions
  const fields = normalizeHeaders(message.headers)
  const hasInput = fields.has('signature-input')
  const hasSignature = fields.has('signature')
  const capability = options.capability
  const describe = () => {
    const described = describeRequestOperation(message, options.operation)
    const inList = (list: readonly string[] | undefined, name: string | undefined) =>
      name !== undefined && list?.includes(name) === true
    return {
      ...described,
      required:
        inList(capability?.required_for, described.operation) ||
        inList(capability?.protocol_methods_required_for, described.protocolMethod),
      warned:
        inList(capability?.warn_for, described.operation) ||
        inList(capability?.protocol_methods_warn_for, described.protocolMethod),
    }
  }
  const names = (described: { operation?: string; protocolMethod?: string }) => ({
    ...(described.operation === undefined ? {} : { operation: described.operation }),
    ...(described.protocolMethod === undefined ? {} : { protocolMethod: described.protocolMethod }),
  })

  if (!hasInput && !hasSignature) {
    const described = describe()
    if (described.registersAuthentication) {
      throw new SignatureError(
        'request_signature_required',
        'a webhook registration with legacy authentication must be signed',
        0,
      )
    }
    if (described.required && options.hasOtherCredential !== true) {
      throw new SignatureError(
        'request_signature_required',
        `${described.operation ?? described.protocolMethod} requires a signed request`,
        0,
      )
    }
    return { status: 'unsigned', ...names(described) }
  }
  if (hasInput !== hasSignature)
    fail('request', 'header_malformed', 'Signature and Signature-Input must be sent together', 1)

  try {
    const verified = await verifySignedMessage(
      message,
      requestRules(options.profile, capability),
      options,
      fields,
    )
    return { status: 'verified', ...verified }
  } catch (error) {
    if (
      !SignatureError.is(error) ||
      error.code === 'request_signature_header_malformed' ||
      options.hasOtherCredential !== true
    ) {
      throw error
    }
    const described = describe()
    if (!described.warned || described.registersAuthentication) throw error
    return { status: 'unverified', error, ...names(described) }
  }
}
