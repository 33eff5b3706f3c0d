/**
 * The get_adcp_capabilities response of this creative agent (`protocol/get-adcp-capabilities-response.json`,
 * 3.1.19): the creative protocol with generation and transformation, request idempotency with its replay TTL,
 * RFC 9421 webhook signing, the brand.json that publishes the signing key, and the canonical build capabilities
 * (`creative.supported_formats`) that build_creative targets by capability_id.
 */
import { identityCapabilities } from '@adwire/agent-server'
import type { SupportedFormatEntry } from './creative/canonical.js'

/** The AdCP task names this agent serves, in the order they are listed. */
export const TASK_NAMES = [
  'get_adcp_capabilities',
  'list_creative_formats',
  'build_creative',
  'preview_creative',
] as const

export interface CapabilitiesInput {
  /** The agent's public base URL (no trailing slash). */
  readonly publicUrl: string
  /** The RFC 9421 algorithm of the webhook-signing key. */
  readonly signingAlgorithm: 'ed25519' | 'ecdsa-p256-sha256'
  readonly replayTtlSeconds: number
  /** How long one build may hold its idempotency key before a duplicate may take over, seconds. */
  readonly inFlightMaxSeconds: number
  readonly version: string
  /** `creative.supported_formats`: the canonical build capabilities (see creative/canonical.ts). */
  readonly supportedFormats?: readonly SupportedFormatEntry[]
}

/**
 * @example
 * capabilities({ publicUrl: 'https://creative.example', signingAlgorithm: 'ed25519', replayTtlSeconds: 86_400, inFlightMaxSeconds: 300, version: '0.0.0' })
 */
export function capabilities(input: CapabilitiesInput): Record<string, unknown> {
  // The origin each purpose's JWKS is served from (brand.json's jwks_uri): verifiers that bootstrap from these
  // capabilities check it against the jwks_uri they resolve (security.mdx step 7).
  const identity = identityCapabilities({
    brandJsonUrl: `${input.publicUrl}/.well-known/brand.json`,
    jwksUrl: `${input.publicUrl}/.well-known/jwks.json`,
    purposes: ['webhook-signing', 'request-signing'],
  })
  return {
    adcp: {
      major_versions: [3],
      supported_versions: ['3.0', '3.1'],
      idempotency: {
        supported: true,
        replay_ttl_seconds: input.replayTtlSeconds,
        in_flight_max_seconds: input.inFlightMaxSeconds,
      },
    },
    supported_protocols: ['creative'],
    specialisms: ['creative-generative', 'creative-template'],
    creative: {
      supports_generation: true,
      supports_transformation: true,
      has_creative_library: false,
      supports_transformers: false,
      supports_refinement: false,
      ...(input.supportedFormats?.length
        ? { supported_formats: [...input.supportedFormats], canonical_catalog_version: '3.1' }
        : {}),
    },
    request_signing: { supported: false },
    webhook_signing: {
      supported: true,
      profile: 'adcp/webhook-signing/v1',
      algorithms: [input.signingAlgorithm],
      legacy_hmac_fallback: true,
    },
    // Valid only with an https brand.json (its schema pattern, and key_origins needs brand_json_url): a
    // plain-http development agent omits the block rather than send an invalid value.
    ...(identity ? { identity } : {}),
    ext: {
      adwire: {
        version: input.version,
        tasks: [...TASK_NAMES],
        jwks_uri: `${input.publicUrl}/.well-known/jwks.json`,
        mcp_url: `${input.publicUrl}/mcp`,
        a2a_url: `${input.publicUrl}/a2a`,
      },
    },
  }
}
