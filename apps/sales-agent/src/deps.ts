/**
 * The real dependencies of the sales agent, built from its environment: the stores on SQLite or PostgreSQL,
 * the signing key, the bearer tokens (and the test-kit keys), the webhook sender on the durable outbox, the
 * seller's domain (catalog, media buys, creatives, accounts, delivery clock) with its event seam, and the task
 * server.
 */
import { createAgentServer, webhookFetch, type AgentServer } from '@adwire/agent-server'
import { createWebhookSender, type SenderLogEntry, type WebhookSender } from '@adwire/webhooks'
import {
  loadTestKitCredentials,
  type TestKitCredential,
  capabilities,
  productSource,
  settleBuy,
  type MediaBuyRecord,
  simulatedDelivery,
  buyWindows,
  startReportScheduler,
  reportingReadiness,
  type SellerEvents,
  createWebhookEvents,
  type WebhookEvents,
  openStorage,
  type Storage,
  createSeller,
  type Seller,
  sellerTasks,
  type WebhookActivitySource,
} from '@adwire/seller'
import { resolveTokens, type ResolvedTokens } from './auth/tokens.js'
import type { SalesAgentEnv } from './env.js'
import { demoCatalog } from './catalog/demo-catalog.js'
import { pacedDelivery } from './delivery/pacing.js'
import { resolveSigningKey, type SigningKey } from './keys.js'

/** A structured log line. */
export type Log = (entry: Record<string, unknown>) => void

/** The agent's version, reported in get_adcp_capabilities and the agent card. */
export const AGENT_VERSION = '0.1.0'
/** How long one request holds its idempotency key before a duplicate may take over, seconds. */
export const IN_FLIGHT_MAX_SECONDS = 300
/** How long the sender retries one webhook, seconds. */
export const RETRY_HORIZON_SECONDS = 86_400

/** What {@link createApp} needs; nothing in it reads the environment. */
export interface SalesAgentDeps {
  readonly publicUrl: string
  readonly storage: Storage
  readonly key: SigningKey
  readonly tokens: ResolvedTokens
  readonly sender: WebhookSender
  readonly events: SellerEvents
  /** The seller's domain (records, catalog, clock, event seam): what the clock's tick runs over. */
  readonly seller: Seller
  /** `ext.adwire.capabilities_version` of the snapshot this instance serves. */
  readonly capabilitiesVersion: string
  readonly agent: AgentServer
  readonly log: Log
}

/** Replacements for tests and embedding. */
export interface DepsOverrides {
  readonly log?: Log
  /** Unix seconds: the task server, the sender, the delivery clock. */
  readonly now?: () => number
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
  /** The event implementation (default: {@link createWebhookEvents}, webhooks through the outbox). */
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

export interface Runtime {
  readonly deps: SalesAgentDeps
  /** Waits for background work, stops the sender, closes the database. */
  close(): Promise<void>
}

/**
 * @example
 * const runtime = await openDeps(parseEnv(), 'http://127.0.0.1:4500')
 * const app = createApp(runtime.deps)
 */
export async function openDeps(
  env: SalesAgentEnv,
  publicUrl: string,
  overrides: DepsOverrides = {},
): Promise<Runtime> {
  const log = overrides.log ?? (() => {})
  const storage = await openStorage(env.database)
  try {
    const key = await resolveSigningKey(storage, env.signingKey)
    const kits: TestKitCredential[] = env.testKitCredentials ? loadTestKitCredentials() : []
    const tokens = await resolveTokens(storage, env.tokens, kits)
    const now = overrides.now ?? (() => Date.now() / 1000)
    const sender = createWebhookSender({
      outbox: storage.outbox,
      key: key.privateJwk,
      fetch:
        overrides.webhookFetch ??
        webhookFetch({ allowInsecure: env.allowInsecureWebhookUrls, userAgent: 'adwire-sales-agent' }),
      pollIntervalMs: overrides.senderPollMs ?? 500,
      retryHorizonSeconds: RETRY_HORIZON_SECONDS,
      ...(overrides.senderLeaseSeconds ? { leaseSeconds: overrides.senderLeaseSeconds } : {}),
      ...(overrides.senderTimeoutMs ? { timeoutMs: overrides.senderTimeoutMs } : {}),
      ...(overrides.senderConcurrency ? { concurrency: overrides.senderConcurrency } : {}),
      ...(overrides.now ? { now: overrides.now } : {}),
      log: (entry: SenderLogEntry) => {
        if (entry.event !== 'enqueued' && entry.event !== 'delivered') log({ webhook: entry })
      },
    })
    const inFlight = new Set<Promise<void>>()
    const background = (work: () => Promise<void>) => {
      // After the current call has answered (the submitted response goes first).
      const running: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((error: unknown) => log({ background: 'failed', error: String(error) }))
        .finally(() => inFlight.delete(running))
      inFlight.add(running)
    }
    const catalog = demoCatalog(env.creativeAgentUrl)
    const delivery = pacedDelivery(env.deliverySeed)
    const products = productSource(storage.records, env.creativeAgentUrl, catalog)
    // The report scheduler settles a due buy on the seller's clock first (a flight that ended completes it,
    // and its final report goes instead of another scheduled one).
    const late: { seller?: Seller } = {}
    const settle = async (buy: MediaBuyRecord): Promise<MediaBuyRecord> =>
      late.seller ? (await settleBuy(late.seller, buy.owner, buy.media_buy_id, 'seller')).buy : buy
    const webhookEvents: WebhookEvents | undefined = overrides.events
      ? undefined
      : createWebhookEvents({
          storage,
          sender,
          now,
          retryHorizonSeconds: RETRY_HORIZON_SECONDS,
          delivery: simulatedDelivery(products, delivery),
          settle,
          readiness: reportingReadiness(storage.records),
          measurementWindows: buyWindows(products),
          ...((overrides.reportPeriodSeconds ?? env.demoReportSeconds)
            ? { reportPeriodSeconds: overrides.reportPeriodSeconds ?? env.demoReportSeconds }
            : {}),
          ...(overrides.measurementDaySeconds
            ? { measurementDaySeconds: overrides.measurementDaySeconds }
            : {}),
          log,
        })
    const events: SellerEvents = overrides.events ? overrides.events({ storage, sender }) : webhookEvents!
    const snapshot = capabilities({
      publicUrl,
      signingAlgorithm: key.algorithm,
      replayTtlSeconds: env.idempotencyTtlSeconds,
      inFlightMaxSeconds: IN_FLIGHT_MAX_SECONDS,
      version: AGENT_VERSION,
      retryHorizonSeconds: RETRY_HORIZON_SECONDS,
      complianceTesting: env.complyTestController,
      creativeReview: env.creativeReview,
      reportingFrequencies: [
        ...new Set(
          catalog.flatMap(
            ({ product }) =>
              (product.reporting_capabilities as { available_reporting_frequencies?: string[] })
                .available_reporting_frequencies ?? [],
          ),
        ),
      ],
      ...(overrides.senderConcurrency ? { concurrency: overrides.senderConcurrency } : {}),
    })
    // The task server is built over the seller's tasks: stored tasks reach its resumeUpdates once it exists.
    const server: { agent?: AgentServer } = {}
    const domain = createSeller({
      env,
      catalog,
      delivery,
      storage,
      events,
      kits,
      now,
      background,
      log,
      resumeUpdates: (taskId, webhooks, lastStatus) => {
        if (!server.agent) throw new Error('the task server is not built yet')
        return server.agent.resumeUpdates(taskId, webhooks, lastStatus)
      },
    })
    late.seller = domain
    const tasks = sellerTasks({
      seller: domain,
      capabilities: () => snapshot,
      webhookActivity:
        overrides.webhookActivity ??
        ((buy, principalId, limit) => events.webhookActivity(buy, principalId, limit)),
    })
    const agent = createAgentServer({
      tasks,
      name: 'adwire-sales-agent',
      version: AGENT_VERSION,
      description:
        'AdCP 3.1 sales agent: display, video, audio and CTV products, media buys, creatives and delivery reporting',
      url: publicUrl,
      auth: {
        tokens: tokens.lookup,
        // A wrong bearer is refused on public tasks too (401 AUTH_INVALID), never served as anonymous.
        refuseInvalidOnPublicTasks: true,
        ...(env.jwt
          ? { jwt: { issuer: env.jwt.issuer, audience: env.jwt.audience, key: env.jwt.secret } }
          : {}),
      },
      idempotency: {
        store: storage.claims,
        replayTtlSeconds: env.idempotencyTtlSeconds,
        leaseSeconds: IN_FLIGHT_MAX_SECONDS,
      },
      sender,
      // The media-buy storyboards and the official AdCP client register push_notification_config without
      // operation_id (the spec's MAY): their webhooks carry the task id as operation_id (agent-server).
      requireOperationId: false,
      ...(overrides.now ? { now: overrides.now } : {}),
      onError: (error, task) => {
        if (error.code === 'INTERNAL_ERROR')
          log({
            task,
            error: error.code,
            cause: String((error.cause as Error | undefined)?.stack ?? error.cause),
          })
      },
    })
    server.agent = agent
    sender.start()
    const scheduler = webhookEvents
      ? startReportScheduler(
          webhookEvents,
          // A demo cadence is looked at twice a period (at least every second, at most every minute).
          overrides.reportTickMs ??
            (env.demoReportSeconds ? Math.min(60_000, Math.max(1_000, env.demoReportSeconds * 500)) : 60_000),
          log,
        )
      : undefined
    let closing: Promise<void> | undefined
    return {
      deps: {
        publicUrl,
        storage,
        key,
        tokens,
        sender,
        events,
        seller: domain,
        agent,
        log,
        capabilitiesVersion: (snapshot.ext as { adwire: { capabilities_version: string } }).adwire
          .capabilities_version,
      },
      close() {
        closing ??= (async () => {
          await scheduler?.stop()
          await Promise.allSettled([...inFlight])
          await sender.stop()
          await storage.close()
        })()
        return closing
      },
    }
  } catch (error) {
    await storage.close()
    throw error
  }
}
