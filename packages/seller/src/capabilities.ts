/**
 * The get_adcp_capabilities response of this sales agent (`protocol/get-adcp-capabilities-response.json`,
 * 3.1.19): the media-buy protocol (pricing models, buying modes, webhook reporting, windowed pull granularities),
 * accounts with sandbox, request idempotency with its replay TTL, RFC 9421 webhook signing, the brand.json that
 * publishes the signing key, the controller scenarios and a `capabilities_version` that changes whenever the
 * snapshot does (the seam a capabilities.changed event is fired from).
 */
import { createHash } from 'node:crypto'
import { CONTROLLER_SCENARIOS } from './controller/scenarios.js'

/** The AdCP task names this agent serves, in the order they are declared. */
export const TASK_NAMES = [
  'get_adcp_capabilities',
  'get_products',
  'list_creative_formats',
  'create_media_buy',
  'update_media_buy',
  'get_media_buys',
  'sync_creatives',
  'list_creatives',
  'get_media_buy_delivery',
  'provide_performance_feedback',
  'sync_accounts',
  'list_accounts',
  'sync_governance',
  'sync_principal',
  'sync_agent_notification_configs',
  'comply_test_controller',
  'get_task_status',
] as const

/** Who may be billed (`account.supported_billing`); sync_accounts refuses the others per account. */
export const SUPPORTED_BILLING = ['operator', 'agent'] as const

/** The time granularities get_media_buy_delivery honours (`time_granularity`). */
export const WINDOWED_PULL_GRANULARITIES = ['daily'] as const

export interface CapabilitiesInput {
  readonly publicUrl: string
  readonly signingAlgorithm: 'ed25519' | 'ecdsa-p256-sha256'
  readonly replayTtlSeconds: number
  readonly inFlightMaxSeconds: number
  readonly version: string
  /** Seconds the sender retries a webhook before giving up. */
  readonly retryHorizonSeconds: number
  /** comply_test_controller is on (COMPLY_TEST_CONTROLLER=1): compliance_testing is advertised. */
  readonly complianceTesting: boolean
  /** How creatives in known formats are reviewed: `auto` approves at once, `manual` waits for a review. */
  readonly creativeReview: 'auto' | 'manual'
  /** The reporting frequencies the catalog's products support (any of them); default daily. */
  readonly reportingFrequencies?: readonly string[]
}

/** The capability snapshot without `context`; `ext.adwire.capabilities_version` is a digest of the rest. */
export function capabilities(input: CapabilitiesInput): Record<string, unknown> {
  const snapshot: Record<string, unknown> = {
    adcp: {
      major_versions: [3],
      supported_versions: ['3.0', '3.1'],
      idempotency: {
        supported: true,
        replay_ttl_seconds: input.replayTtlSeconds,
        in_flight_max_seconds: input.inFlightMaxSeconds,
      },
    },
    supported_protocols: ['media_buy'],
    specialisms: ['sales-non-guaranteed', 'sales-guaranteed'],
    account: {
      require_operator_auth: false,
      supported_billing: [...SUPPORTED_BILLING],
      required_for_products: false,
      sandbox: true,
    },
    media_buy: {
      supported_pricing_models: ['cpm', 'vcpm', 'cpcv', 'flat_rate'],
      buying_modes: ['brief', 'wholesale', 'refine'],
      reporting_delivery_methods: ['webhook'],
      creative_approval_mode: input.creativeReview === 'manual' ? 'require_human' : 'auto_approve',
      // Impairments show on the buy snapshot (health, impairments[]); webhook propagation lands with emission.
      propagation_surfaces: ['snapshot'],
      features: {
        inline_creative_management: false,
        property_list_filtering: false,
        catalog_management: false,
      },
      reporting_capabilities: {
        windowed_pull_granularities: [...WINDOWED_PULL_GRANULARITIES],
        available_reporting_frequencies: [...(input.reportingFrequencies ?? ['daily'])],
        date_range_support: 'date_range',
      },
    },
    // The seller keeps a creative library (sync_creatives, list_creatives); it does not build creatives.
    creative: { has_creative_library: true, supports_generation: false, supports_transformation: false },
    request_signing: { supported: false },
    webhook_signing: {
      supported: true,
      profile: 'adcp/webhook-signing/v1',
      algorithms: [input.signingAlgorithm],
      legacy_hmac_fallback: true,
    },
    identity: {
      brand_json_url: `${input.publicUrl}/.well-known/brand.json`,
      key_origins: { webhook_signing: new URL(input.publicUrl).origin },
    },
    ...(input.complianceTesting
      ? {
          compliance_testing: { scenarios: CONTROLLER_SCENARIOS.filter((name) => name !== 'list_scenarios') },
        }
      : {}),
  }
  const version = createHash('sha256').update(JSON.stringify(snapshot)).digest('hex').slice(0, 16)
  return {
    ...snapshot,
    ext: {
      adwire: {
        version: input.version,
        capabilities_version: version,
        tasks: [...TASK_NAMES],
        jwks_uri: `${input.publicUrl}/.well-known/jwks.json`,
        mcp_url: `${input.publicUrl}/mcp`,
        a2a_url: `${input.publicUrl}/a2a`,
        delivery_retry_horizon_seconds: input.retryHorizonSeconds,
      },
    },
  }
}
