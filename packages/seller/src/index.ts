/**
 * @adwire/seller: the AdCP 3.1.19 seller side as a library. A seller supplies its ad server's catalog and
 * delivery (its adapter) and gets the media-buy tasks (declared once on @adwire/agent-server, served over
 * MCP and A2A), accounts, creatives, delivery reporting, every webhook push through the durable outbox of
 * @adwire/webhooks, and the compliance test controller, on SQLite or PostgreSQL.
 */

// The seller in one call: storage, keys, tokens, webhooks, the task server and its HTTP surface, periodic work.
export {
  DEFAULT_PRINCIPAL,
  IN_FLIGHT_MAX_SECONDS,
  RETRY_HORIZON_SECONDS,
  openSeller,
} from './open/open-seller.js'
export type {
  OpenSellerOptions,
  SellerIdentity,
  SellerIntervals,
  SellerKey,
  SellerLog,
  SellerOverrides,
  SellerRuntime,
} from './open/types.js'

// The seller: settings, storage, domain and tasks.
export { RESOURCES, type BuyReview, type DatabaseConfig, type SellerSettings } from './settings.js'
export { openStorage } from './storage/index.js'
export {
  callPlatform,
  type AccountStatus,
  type CreativeVerdict,
  type OrderAction,
  type SellerPlatform,
} from './platform.js'
export type * from './storage/types.js'
export { openSqliteStorage } from './storage/sqlite.js'
export { openPostgresStorage } from './storage/postgres.js'
export { createSeller, tickBuys, type SellerParts } from './seller-runtime.js'
export { isLivePrincipal, isSandboxPrincipal, ownerOf, type Seller } from './seller.js'
export { sellerTasks, type TaskDeps } from './tasks/index.js'
export { capabilities, TASK_NAMES, type CapabilitiesInput } from './capabilities.js'
export { announceCapabilities } from './capabilities-version.js'

// The catalog the seller's adapter gives.
export { firstPartyMeasurement, type CatalogProduct } from './catalog/types.js'
export {
  productFromFixture,
  productSource,
  withPricingOption,
  type ProductSource,
  type SandboxOwner,
} from './catalog/product-source.js'

// Delivery data the seller's ad server gives.
export {
  dayOf,
  servedSeconds,
  type DayDelivery,
  type DeliveryModel,
  type PackagePricing,
} from './delivery/simulate.js'

// Events and webhook pushes.
export type { BuyStatusChange, ImpairmentChange, SellerEvent, SellerEvents } from './events/seller-events.js'
export { recordingEvents } from './events/seller-events.js'
export {
  createWebhookEvents,
  type WebhookEvents,
  type WebhookEventsOptions,
} from './events/webhook-events.js'
export { simulatedDelivery, type DeliveryMetrics, type DeliverySource } from './events/delivery-snapshot.js'
export { buyWindows, type MeasurementWindow } from './events/measurement-windows.js'
export { startReportScheduler, type ReportScheduler } from './events/report-scheduler.js'
export { reportingReadiness } from './events/reporting-upstream.js'
export { SCHEDULE_KIND, type ReportSchedule } from './events/delivery-reports.js'
export { DEFAULT_FIRE_RETENTION_SECONDS, pruneWebhookRecords } from './events/retention.js'
export { FIRE_KIND, recordFire, recordFireLog } from './activity/webhook-activity.js'
export type { WebhookActivitySource } from './media-buys/get.js'

// Media buys, accounts, creatives and durable work (for embedding and tests).
export { settleBuy } from './media-buys/reconcile.js'
export type { MediaBuyRecord, MediaBuyStatus, PackageRecord } from './media-buys/types.js'
export type { CreativeRecord } from './creatives/types.js'
export { ACCOUNT_KIND } from './accounts/resolve.js'
export { AGENT_CONFIGS_KIND } from './accounts/governance.js'
export { tickDueWork } from './async/due-runner.js'
export { DUE_KIND, LEASE_SECONDS, type DueWork } from './async/due-work.js'
export { moveTask } from './async/task-records.js'

// The official compliance test-kit keys.
export {
  isKitKeyPrincipal,
  loadTestKitCredentials,
  testKitPrincipal,
  testKitPrincipalId,
  type TestKitCredential,
} from './auth/test-kits.js'
