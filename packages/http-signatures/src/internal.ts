/**
 * `@adwire/http-signatures/internal`: the building blocks the other adwire packages and apps share with this
 * one (signature bases, Signature-Input parsing, header normalization, key checks, the revocation document,
 * brand-origin binding, timing-safe comparison). Not part of the public API: names here may change or go in
 * any release without a major version. Applications use the main entry (`@adwire/http-signatures`).
 *
 * @packageDocumentation
 */
export { findDuplicateKeys, sanitizeKeyNamesForLog, type DuplicateKeyReport } from './json-duplicates.js'
export { constantTimeEqual } from './constant-time.js'
export { sha256 } from './crypto-backend.js'
export { assertKeyOrigin, declaredPosture } from './keys/capabilities-posture.js'
export {
  assertBrandOrigin,
  registrableDomain,
  type BrandOriginBinding,
  type BrandOriginOptions,
} from './keys/brand-origin.js'
export {
  parseRevocationList,
  readRevocationList,
  type RevocationListJson,
  type RevocationListSnapshot,
  type RevocationVerification,
} from './keys/revocation-document.js'
export { verifyFlattenedJws, type JwsKeyLookup } from './keys/jws.js'
export { WEBHOOK_COMPONENTS } from './webhook.js'
export { composeSignatureBase, componentValue } from './signature-base.js'
export {
  parseSignatureInput,
  isValidNonce,
  type SignatureEncoding,
  type SignatureInput,
  type SignatureParameters,
} from './signature-input.js'
export { canonicalizeTargetUri, type CanonicalTarget } from './canonicalize.js'
export { algorithmOfJwk, isAllowedAlgorithm } from './algorithms.js'
export { keyPurposeProblem } from './key-lookup.js'
export { normalizeHeaders, type HeaderFields } from './headers.js'
