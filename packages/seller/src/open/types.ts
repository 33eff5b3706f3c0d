/** What {@link openSeller} takes and what it gives: a seller's whole runtime from its catalog and delivery. */
import type { AgentServer, Principal, TokenLookup } from '@adwire/agent-server'
import type {
  AgentHttp,
  BrandIdentity,
  ResolvedTokens,
  SigningKey,
  TokenGrant,
} from '@adwire/agent-server/host'
import type { Jwks } from '@adwire/http-signatures'
import type { WebhookSender } from '@adwire/webhooks'
import type { CatalogProduct } from '../catalog/types.js'
import type { DeliveryModel } from '../delivery/simulate.js'
import type { SellerPlatform } from '../platform.js'
import type { SellerEvents } from '../events/seller-events.js'
import type { WebhookActivitySource } from '../media-buys/get.js'
import type { Seller } from '../seller.js'
import type { DatabaseConfig, SellerSettings } from '../settings.js'
import type { Storage } from '../storage/index.js'

/** A structured log line. */
export type SellerLog = (entry: Record<string, unknown>) => void

/** The webhook-signing key and the JWKS publishing it. */
export interface SellerKey extends SigningKey {
  readonly jwks: Jwks
}

/** Replacements for tests and embedding: cadences, the webhook fetch, the event implementation. */
export interface SellerOverrides {
  /** How often an idle sender looks for due webhooks, milliseconds. Default 500. */
  readonly senderPollMs?: number
  /** How long a leased outbox entry belongs to this sender, seconds (default 60; must exceed the timeout). */
  readonly senderLeaseSeconds?: number
  /** Time limit of one webhook attempt, milliseconds (default 10,000). */
  readonly senderTimeoutMs?: number
  /** Webhook deliveries in flight at once (the sender's default when unset; 1 keeps one task's in order). */
  readonly senderConcurrency?: number
  /** The fetch webhooks are delivered with. Default: the SSRF-guarded global fetch. */
  readonly webhookFetch?: typeof fetch
  /** The event implementation (default: webhooks through the outbox, `createWebhookEvents`). */
  readonly events?: (context: { readonly storage: Storage; readonly sender: WebhookSender }) => SellerEvents
  /** Every buy's delivery-report cadence, seconds (default: its reporting_webhook's reporting_frequency). */
  readonly reportPeriodSeconds?: number
  /** How often the report scheduler looks for due reports, milliseconds. Default 60,000. */
  readonly reportTickMs?: number
  /** Seconds of one measurement day (window_update maturation; default 86,400). Demos and tests shorten it. */
  readonly measurementDaySeconds?: number
  /** Where get_media_buys reads webhook_activity (default: the events' record of fires). */
  readonly webhookActivity?: WebhookActivitySource
}

/** Who the agent says it is: in the MCP/A2A handshake, the agent card, get_adcp_capabilities and brand.json. */
export interface SellerIdentity {
  /** Default `adwire-seller`. */
  readonly name?: string
  /** Reported as `ext.adwire.version`. Default `0.1.0`. */
  readonly version?: string
  readonly description?: string
  /** The agent in brand.json. Default: a `sales` agent with id `adwire_seller`. */
  readonly brand?: BrandIdentity
  /** The User-Agent of webhook deliveries. Default `adwire-seller`. */
  readonly userAgent?: string
}

export interface OpenSellerOptions {
  /** How the seller reviews buys and creatives, where its formats live, its sandbox, its webhook URL policy. */
  readonly settings: SellerSettings
  /** The products the ad server sells. */
  readonly catalog: readonly CatalogProduct[]
  /** What the ad server delivered, per package and day. */
  readonly delivery: DeliveryModel
  /** The ad server's booking, change and creative review calls (each optional). */
  readonly platform?: SellerPlatform
  /** Where records are kept: a database opened here (and closed by `close()`), or an opened Storage (left open). */
  readonly database: DatabaseConfig | Storage
  /** The agent's public base URL, no trailing slash (brand.json, the agent card, get_adcp_capabilities). */
  readonly publicUrl: string
  /**
   * Bearer tokens: grants (unset or empty: one token is generated at the first start, returned once as
   * `tokens.generated`, and kept hashed in the database), or a lookup of the seller's own.
   */
  readonly tokens?: readonly TokenGrant[] | TokenLookup
  /** The generated token's prefix. Default `sat_`. */
  readonly tokenPrefix?: string
  /** The generated token's principal. Default: every permission on every area ({@link DEFAULT_PRINCIPAL}). */
  readonly defaultPrincipal?: Principal
  /** Test only: the official compliance test-kit keys are accepted, each its own principal. */
  readonly testKitCredentials?: boolean
  /** JWT bearer verification with an HMAC secret. */
  readonly jwt?: { readonly issuer: string; readonly audience: string; readonly secret: string }
  /** The webhook-signing private JWK (Ed25519 or P-256); unset: generated once and kept in the database. */
  readonly signingKey?: Record<string, unknown>
  /** The start of a generated key's kid. Default `seller`. */
  readonly kidPrefix?: string
  /** How long an idempotency key's answer is replayed, seconds (3,600 to 604,800). Default 86,400. */
  readonly idempotencyTtlSeconds?: number
  /** The largest request body on /mcp and /a2a, bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number
  /** Demo only: every buy's scheduled delivery reports this often, seconds, whatever its frequency. */
  readonly demoReportSeconds?: number
  /** How long webhook_activity's fire log is kept, seconds. Default 30 days. */
  readonly webhookActivityRetentionSeconds?: number
  readonly identity?: SellerIdentity
  /** Unix seconds: the task server, the sender, the delivery clock. Default the system clock. */
  readonly now?: () => number
  readonly log?: SellerLog
  readonly overrides?: SellerOverrides
}

/** How often {@link SellerRuntime.start} runs each periodic job, milliseconds; 0: never. */
export interface SellerIntervals {
  /** Expired idempotency records and old webhook bookkeeping. Default 60,000. */
  readonly sweepMs?: number
  /** The seller's clock over the live buys. Default 30,000. */
  readonly tickMs?: number
  /** Due reviews. Default 1,000. */
  readonly dueMs?: number
}

/** An opened seller: its parts, its HTTP handler, its periodic work. */
export interface SellerRuntime {
  readonly publicUrl: string
  readonly maxBodyBytes?: number
  readonly storage: Storage
  readonly key: SellerKey
  readonly tokens: ResolvedTokens
  readonly sender: WebhookSender
  readonly events: SellerEvents
  /** The seller's domain (records, catalog, clock, event seam): what the clock's tick runs over. */
  readonly seller: Seller
  /** `ext.adwire.capabilities_version` of the snapshot this instance serves. */
  readonly capabilitiesVersion: string
  readonly agent: AgentServer
  readonly log: SellerLog
  /** The HTTP surface: /mcp, /a2a, the agent cards, brand.json, the JWKS, /health. */
  readonly http: AgentHttp
  /** Answers one web-standard request (`http.fetch`). */
  fetch(request: Request): Promise<Response>
  /** Deletes expired idempotency records and webhook bookkeeping nothing reads any more. */
  sweep(): Promise<void>
  /** One tick of the seller's clock over every live buy; resolves with how many it settled. */
  tick(): Promise<number>
  /** Finishes the reviews that are due; resolves with how many. */
  due(): Promise<number>
  /** Records this snapshot's capabilities_version and fires capabilities.changed when it is new. */
  announce(): Promise<boolean>
  /** Announces the capabilities, then runs sweep, tick and due on timers until `close()`. Once only. */
  start(intervals?: SellerIntervals): Promise<void>
  /** Stops the timers, waits for background work, stops the sender, closes the database it opened. */
  close(): Promise<void>
}
