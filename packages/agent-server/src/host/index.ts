/**
 * `@adwire/agent-server/host`: what every AdCP agent process serves around its tasks, written once. Bearer
 * tokens from TOKENS or generated once (kept hashed), signing keys from the environment or generated once (kept
 * in the agent's settings table), the HTTP surface (brand.json, JWKS, public-URL rewrite, body cap, /health,
 * the `{ adcp_error }` body), the listener's answers while starting, and the periodic loops (`startLoops`). The
 * start/stop order lives in `@adwire/service-kit` (`startService`).
 */
export type { SettingsStore } from './settings.js'
export {
  TOKEN_DIGEST_SETTING,
  parsePermissions,
  parseTokenGrants,
  resolveTokens,
  type ParsedTokens,
  type ResolveTokensOptions,
  type ResolvedTokens,
  type TokenGrant,
} from './tokens.js'
export {
  resolveSigningKey,
  resolveSigningKeys,
  type SigningKey,
  type SigningKeyOptions,
  type SigningKeys,
} from './keys.js'
export { AGENT_LISTEN_ANSWERS, adcpErrorResponse, startingResponse } from './answers.js'
export { brandJson, type BrandIdentity } from './brand.js'
export { MAX_AGENT_BODY_BYTES, createAgentHttp, type AgentHttp, type AgentHttpOptions } from './http.js'
export { every, startLoops, type Every, type Loop, type Loops } from './periodic.js'
