export { defineTask } from './define-task.js'
export { createAgentServer, type AgentServer, type AgentServerOptions } from './server.js'
export {
  AgentError,
  failedTaskBody,
  type AdcpErrorObject,
  type FailedTaskBody,
  type AgentErrorCode,
  type AgentErrorOptions,
  type Recovery,
} from './errors.js'
export {
  hashedTokenAuth,
  hashedTokenLookup,
  type AuthOptions,
  type JwtAuthOptions,
  type TokenLookup,
} from './auth.js'
export {
  REPLAY_TTL_BOUNDS,
  checkIdempotencyOptions,
  requestFingerprint,
  type IdempotencyOptions,
} from './idempotency.js'
export { ADCP_A2A_EXTENSION, type A2AOptions } from './a2a.js'
export { a2aInvocation, a2aResponseData, type A2AInvocationOptions } from './a2a-request.js'
export {
  ADCP_SCOPES,
  MemoryOAuthClientStore,
  createOAuthRegistration,
  type OAuthClient,
  type OAuthClientStore,
  type OAuthRegistrationOptions,
} from './oauth.js'
export { ENVELOPE_FIELDS } from './validate.js'
export { getAgentCapabilities, type AgentCapabilitiesOptions } from './capabilities-client.js'
export { checkRequestSignature, type RequestSigningOptions, type SignatureCheck } from './request-signing.js'
export {
  identityCapabilities,
  publishedJwk,
  signerJwk,
  signingJwks,
  type Jwk,
  type KeyPurpose,
} from './signing-keys.js'
export { createHttpAuthGate, type HttpAuthGateOptions } from './http-auth.js'
export { refusedRequest, type HttpRefusal } from './request-refusal.js'
export {
  parseRequest,
  requestProblem,
  type RequestErrorFactory,
  type RequestProblem,
} from './request-validation.js'
export { toolAnnotations, toolInputSchema, toolOutputSchema } from './tool-schemas.js'
export type * from './types.js'
export {
  assertWebhookUrl,
  webhookFetch,
  webhookUrlProblem,
  type WebhookFetchOptions,
} from './webhook-urls.js'
