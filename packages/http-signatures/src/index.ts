export { SignatureError } from './errors.js'
export type {
  KeyResolutionErrorCode,
  LegacyAuthErrorCode,
  RequestSignatureErrorCode,
  SignatureErrorCode,
  WebhookSignatureErrorCode,
} from './errors.js'
export type * from './types.js'
export { findDuplicateKeys, sanitizeKeyNamesForLog, type DuplicateKeyReport } from './json-duplicates.js'
export { constantTimeEqual } from './constant-time.js'
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
export type { LookupAddress, SafeFetchOptions } from './keys/safe-fetch.js'
export { checkAddress, type AddressPolicy, type PinnedAddress } from './keys/address-policy.js'
export {
  defaultSafeFetch,
  type FetchedResource,
  type SafeFetch,
  type SafeFetchInit,
} from './keys/fetch-types.js'
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
  assertKeyOrigin,
  declaredPosture,
  readSigningPosture,
  type ReadSigningPostureOptions,
  type SigningPosture,
  type SigningPurpose,
} from './keys/capabilities-posture.js'
export {
  assertBrandOrigin,
  registrableDomain,
  type BrandOriginBinding,
  type BrandOriginOptions,
} from './keys/brand-origin.js'
export { adagentsPinnedResolver, type AdagentsPinnedResolverOptions } from './keys/adagents-pins.js'
export {
  revocationList,
  staticRevocationList,
  type RevocationList,
  type RevocationListOptions,
  type RevocationTiming,
} from './keys/revocation-list.js'
export {
  parseRevocationList,
  readRevocationList,
  type RevocationListJson,
  type RevocationListSnapshot,
  type RevocationVerification,
} from './keys/revocation-document.js'
export { verifyFlattenedJws, type JwsKeyLookup } from './keys/jws.js'
export {
  signWebhook,
  verifyWebhook,
  WEBHOOK_COMPONENTS,
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
export {
  buildSignatureBase,
  composeSignatureBase,
  componentValue,
  type SignatureBaseParts,
} from './signature-base.js'
export {
  parseSignatureInput,
  isValidNonce,
  type SignatureEncoding,
  type SignatureInput,
  type SignatureParameters,
} from './signature-input.js'
export { canonicalizeTargetUri, type CanonicalTarget } from './canonicalize.js'
export { createContentDigest, verifyContentDigest } from './content-digest.js'
export { algorithmOfJwk, isAllowedAlgorithm } from './algorithms.js'
export { keyPurposeProblem, type RevocationInput } from './key-lookup.js'
export { describeRequestOperation, type RequestOperation } from './request-operation.js'
export { MemoryReplayStore, type MemoryReplayStoreOptions } from './replay-memory.js'
export { staticRevocation, type StaticRevocationOptions } from './revocation.js'
export { normalizeHeaders, type HeaderFields } from './headers.js'
