/**
 * `@adwire/http-signatures`: RFC 9421 signing and verification of AdCP webhooks and requests, Content-Digest,
 * the deprecated HMAC-SHA256 and Bearer webhook schemes, key resolution (JWKS, brand.json, the capabilities
 * bootstrap, adagents.json pins) and revocation. Web-standard: runs on Node, Deno, Bun and edge runtimes. The
 * Node-only SSRF-safe fetch is `@adwire/http-signatures/node`; helpers shared with sibling adwire packages are
 * `@adwire/http-signatures/internal` (not covered by semver).
 *
 * @packageDocumentation
 */
export { SignatureError } from './errors.js'
export type {
  KeyResolutionErrorCode,
  LegacyAuthErrorCode,
  RequestSignatureErrorCode,
  SignatureErrorCode,
  WebhookSignatureErrorCode,
} from './errors.js'
export type * from './types.js'
export {
  signWebhook,
  verifyWebhook,
  WEBHOOK_TAG,
  type SignWebhookOptions,
  type VerifyWebhookOptions,
} from './webhook.js'
export {
  signRequest,
  verifyRequest,
  REQUEST_TAG,
  type RequestProfileVersion,
  type RequestSigningCapability,
  type SignRequestOptions,
  type VerifiedRequest,
  type VerifyRequestOptions,
} from './request.js'
export type { SignedMessage, SignOptions } from './sign-core.js'
export type { VerifiedSignature, VerifyOptions } from './verify-core.js'
export { buildSignatureBase, type SignatureBaseParts } from './signature-base.js'
export { MAX_NONCE_LENGTH } from './signature-input.js'
export { describeRequestOperation, type RequestOperation } from './request-operation.js'
export { createContentDigest, verifyContentDigest } from './content-digest.js'
export {
  assertHmacSecret,
  bearerHeaders,
  signHmacWebhook,
  verifyBearerWebhook,
  verifyHmacWebhook,
  type HmacHeaders,
  type HmacOptions,
  type HmacVerifyOptions,
} from './legacy-hmac.js'
export {
  generateSigningKey,
  type GeneratedSigningKey,
  type GenerateSigningKeyOptions,
  type KeyAlgorithm,
} from './keygen.js'
export { MemoryReplayStore, type MemoryReplayStoreOptions } from './replay-memory.js'
export { DEFAULT_WEBHOOK_NONCE_RATE, NONCE_HORIZON_SECONDS, nonceCapForRate } from './replay-cap.js'
export { staticRevocation, type StaticRevocationOptions } from './revocation.js'
export type { RevocationInput } from './key-lookup.js'
export { jwksResolver, type JwksResolverOptions } from './keys/static-jwks.js'
export {
  remoteJwksResolver,
  MAX_JWKS_CACHE_SECONDS,
  type RemoteJwksResolverOptions,
} from './keys/remote-jwks.js'
export {
  brandJsonResolver,
  type BrandJsonDiscovery,
  type BrandJsonKeyResolver,
  type BrandJsonResolverOptions,
} from './keys/brand-json.js'
export {
  capabilitiesBootstrapResolver,
  type CapabilitiesBootstrapDiscovery,
  type CapabilitiesBootstrapResolver,
  type CapabilitiesBootstrapResolverOptions,
  type GetCapabilities,
} from './keys/capabilities-bootstrap.js'
export {
  readSigningPosture,
  type ReadSigningPostureOptions,
  type SigningPosture,
  type SigningPurpose,
} from './keys/capabilities-posture.js'
export { adagentsPinnedResolver, type AdagentsPinnedResolverOptions } from './keys/adagents-pins.js'
export {
  revocationList,
  staticRevocationList,
  type RevocationList,
  type RevocationListOptions,
  type RevocationTiming,
} from './keys/revocation-list.js'
export {
  defaultSafeFetch,
  type FetchedResource,
  type SafeFetch,
  type SafeFetchInit,
} from './keys/fetch-types.js'
export { checkAddress, type AddressPolicy, type PinnedAddress } from './keys/address-policy.js'
