/**
 * A seller in one call: the storage (SQLite or PostgreSQL, or one the caller opened), the signing key, the
 * bearer tokens (and the test-kit keys), the webhook sender on the durable outbox, the seller's domain over its
 * catalog and delivery with its event seam, the task server, and the agent host's HTTP surface; its periodic
 * work as functions and as timers (`start()`/`close()`).
 */
import { createAgentServer, type AgentServer, type Principal } from '@adwire/agent-server'
import {
  createAgentHttp,
  resolveSigningKeys,
  resolveTokens,
  startLoops,
  type Loops,
  type ResolvedTokens,
} from '@adwire/agent-server/host'
import { type SenderLogEntry } from '@adwire/webhooks'
import { createNodeWebhookSender } from '@adwire/webhooks/node'
import { loadTestKitCredentials, testKitPrincipal, type TestKitCredential } from '../auth/test-kits.js'
import { cancelForCaller } from '../async/cancel-task.js'
import { tickDueWork } from '../async/due-runner.js'
import { announceCapabilities } from '../capabilities-version.js'
import { capabilities } from '../capabilities.js'
import { productSource } from '../catalog/product-source.js'
import { simulatedDelivery } from '../events/delivery-snapshot.js'
import { buyWindows } from '../events/measurement-windows.js'
import { startReportScheduler } from '../events/report-scheduler.js'
import { reportingReadiness } from '../events/reporting-upstream.js'
import { DEFAULT_FIRE_RETENTION_SECONDS, pruneWebhookRecords } from '../events/retention.js'
import type { SellerEvents } from '../events/seller-events.js'
import { createWebhookEvents, type WebhookEvents } from '../events/webhook-events.js'
import { settleBuy } from '../media-buys/reconcile.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import { createSeller, tickBuys } from '../seller-runtime.js'
import type { Seller } from '../seller.js'
import { openStorage, type Storage } from '../storage/index.js'
import { recordFireLog } from '../activity/webhook-activity.js'
import { sellerTasks } from '../tasks/index.js'
import type { OpenSellerOptions, SellerKey, SellerRuntime } from './types.js'

/** How long one request holds its idempotency key before a duplicate may take over, seconds. */
export const IN_FLIGHT_MAX_SECONDS = 300
/** How long the sender retries one webhook, seconds. */
export const RETRY_HORIZON_SECONDS = 86_400

/** The principal of a generated token: every permission on every area. */
export const DEFAULT_PRINCIPAL: Principal = {
  principal_id: 'default-buyer',
  permissions: {
    products: ['read', 'write', 'delete', 'approve'],
    media_buys: ['read', 'write', 'delete', 'approve'],
    creatives: ['read', 'write', 'delete', 'approve'],
    reports: ['read', 'write', 'delete', 'approve'],
  },
}

const isStorage = (database: OpenSellerOptions['database']): database is Storage => 'records' in database

/** Every reporting frequency some product of the catalog offers. */
const reportingFrequencies = (catalog: OpenSellerOptions['catalog']) => [
  ...new Set(
    catalog.flatMap(
      ({ product }) =>
        (product.reporting_capabilities as { available_reporting_frequencies?: string[] } | undefined)
          ?.available_reporting_frequencies ?? [],
    ),
  ),
]

/**
 * Opens the seller: the sender and the report scheduler run at once; `start()` adds the sweep, the clock's
 * tick and the due reviews on timers (or call `sweep()`, `tick()`, `due()` from your own scheduler).
 *
 * @example
 * const seller = await openSeller({
 *   settings, catalog, delivery, publicUrl: 'https://seller.example',
 *   database: { kind: 'sqlite', path: './data/seller.sqlite' },
 * })
 * await seller.start()
 * // serve seller.fetch (a web-standard handler) with any server; then
 * await seller.close()
 */
export async function openSeller(options: OpenSellerOptions): Promise<SellerRuntime> {
  const { settings, catalog, delivery, publicUrl } = options
  const overrides = options.overrides ?? {}
  const log = options.log ?? (() => {})
  const identity = options.identity ?? {}
  const version = identity.version ?? '0.1.0'
  const replayTtlSeconds = options.idempotencyTtlSeconds ?? 86_400
  const owned = !isStorage(options.database)
  const storage = isStorage(options.database) ? options.database : await openStorage(options.database)
  try {
    const keys = await resolveSigningKeys(storage, {
      kidPrefix: options.kidPrefix ?? 'seller',
      ...(options.signingKey ? { webhookJwk: options.signingKey } : {}),
    })
    const key: SellerKey = { ...keys.webhook, jwks: keys.jwks }
    const kits: TestKitCredential[] = options.testKitCredentials ? loadTestKitCredentials() : []
    // The official test-kit keys, each its own principal, after the tokens.
    const fallback = kits.length > 0 ? (token: string) => testKitPrincipal(kits, token) : undefined
    const given = options.tokens
    const tokens: ResolvedTokens =
      typeof given === 'function'
        ? {
            source: 'env',
            lookup: fallback ? async (token) => (await given(token)) ?? fallback(token) : given,
          }
        : await resolveTokens(storage, given ?? [], {
            prefix: options.tokenPrefix ?? 'sat_',
            defaultPrincipal: options.defaultPrincipal ?? DEFAULT_PRINCIPAL,
            ...(fallback ? { fallback } : {}),
          })
    const now = options.now ?? (() => Date.now() / 1000)
    // The sender's default fetch is pinned under the webhook URL policy (@adwire/webhooks/node).
    const sender = createNodeWebhookSender({
      outbox: storage.outbox,
      fireLog: recordFireLog(storage.records),
      key: key.privateJwk,
      allowInsecureUrls: settings.allowInsecureWebhookUrls,
      userAgent: identity.userAgent ?? 'adwire-seller',
      ...(overrides.webhookFetch ? { fetch: overrides.webhookFetch } : {}),
      pollIntervalMs: overrides.senderPollMs ?? 500,
      retryHorizonSeconds: RETRY_HORIZON_SECONDS,
      ...(overrides.senderLeaseSeconds ? { leaseSeconds: overrides.senderLeaseSeconds } : {}),
      ...(overrides.senderTimeoutMs ? { timeoutMs: overrides.senderTimeoutMs } : {}),
      ...(overrides.senderConcurrency ? { concurrency: overrides.senderConcurrency } : {}),
      ...(options.now ? { now: options.now } : {}),
      log: (entry: SenderLogEntry) => {
        if (entry.event !== 'enqueued' && entry.event !== 'delivered') log({ webhook: entry })
      },
    })
    // What a transaction enqueued is visible once it commits: the worker looks at once rather than at its next poll.
    storage.onCommit(() => sender.wake())
    const inFlight = new Set<Promise<void>>()
    const background = (work: () => Promise<void>) => {
      // After the current call has answered (the submitted response goes first).
      const running: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((error: unknown) => log({ background: 'failed', error: String(error) }))
        .finally(() => inFlight.delete(running))
      inFlight.add(running)
    }
    const products = productSource(storage.records, settings.creativeAgentUrl, catalog)
    // The report scheduler settles a due buy on the seller's clock first (a flight that ended completes it,
    // and its final report goes instead of another scheduled one).
    const late: { seller?: Seller } = {}
    const settle = async (buy: MediaBuyRecord): Promise<MediaBuyRecord> =>
      late.seller ? (await settleBuy(late.seller, buy.owner, buy.media_buy_id, 'seller')).buy : buy
    const reportPeriodSeconds = overrides.reportPeriodSeconds ?? options.demoReportSeconds
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
          ...(reportPeriodSeconds ? { reportPeriodSeconds } : {}),
          ...(overrides.measurementDaySeconds
            ? { measurementDaySeconds: overrides.measurementDaySeconds }
            : {}),
          log,
        })
    const events: SellerEvents = overrides.events ? overrides.events({ storage, sender }) : webhookEvents!
    const snapshot = capabilities({
      publicUrl,
      signingAlgorithm: key.algorithm,
      replayTtlSeconds,
      inFlightMaxSeconds: IN_FLIGHT_MAX_SECONDS,
      version,
      retryHorizonSeconds: RETRY_HORIZON_SECONDS,
      complianceTesting: settings.complyTestController,
      creativeReview: settings.creativeReview,
      reportingFrequencies: reportingFrequencies(catalog),
      ...(overrides.senderConcurrency ? { concurrency: overrides.senderConcurrency } : {}),
    })
    // The task server is built over the seller's tasks: stored tasks reach its resumeUpdates once it exists.
    const server: { agent?: AgentServer } = {}
    const seller = createSeller({
      env: settings,
      catalog,
      delivery,
      ...(options.platform ? { platform: options.platform } : {}),
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
      replayTtlSeconds,
    })
    late.seller = seller
    const tasks = sellerTasks({
      seller,
      capabilities: () => snapshot,
      webhookActivity:
        overrides.webhookActivity ??
        ((buy, principalId, limit) => events.webhookActivity(buy, principalId, limit)),
    })
    const agent = createAgentServer({
      tasks,
      name: identity.name ?? 'adwire-seller',
      version,
      description:
        identity.description ??
        'AdCP 3.1 sales agent: products, media buys, creatives and delivery reporting',
      url: publicUrl,
      auth: {
        tokens: tokens.lookup,
        // A wrong bearer is refused on public tasks too (401 AUTH_INVALID), never served as anonymous.
        refuseInvalidOnPublicTasks: true,
        ...(options.jwt
          ? { jwt: { issuer: options.jwt.issuer, audience: options.jwt.audience, key: options.jwt.secret } }
          : {}),
      },
      idempotency: { store: storage.claims, replayTtlSeconds, leaseSeconds: IN_FLIGHT_MAX_SECONDS },
      sender,
      // The media-buy storyboards and the official AdCP client register push_notification_config without
      // operation_id (the spec's MAY): their webhooks carry the task id as operation_id (agent-server).
      requireOperationId: false,
      // A2A push registrations pass the same URL policy as push_notification_config (tasks/define.ts).
      allowInsecureWebhookUrls: settings.allowInsecureWebhookUrls,
      // A2A CancelTask on the Task that answered a buy `submitted` cancels the buy's review (async/cancel-task.ts).
      cancelTask: (request) => cancelForCaller(seller, request),
      ...(options.now ? { now: options.now } : {}),
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
    const http = createAgentHttp({
      publicUrl,
      agent,
      brand: identity.brand ?? {
        type: 'sales',
        id: 'adwire_seller',
        description: 'AdCP 3.1 seller: products, media buys, delivery',
        name: 'the seller',
      },
      jwks: key.jwks,
      health: storage,
      log,
      ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
    })
    sender.start()
    const scheduler = webhookEvents
      ? startReportScheduler(
          webhookEvents,
          // A demo cadence is looked at twice a period (at least every second, at most every minute).
          overrides.reportTickMs ??
            (options.demoReportSeconds
              ? Math.min(60_000, Math.max(1_000, options.demoReportSeconds * 500))
              : 60_000),
          log,
        )
      : undefined
    const retention = options.webhookActivityRetentionSeconds ?? DEFAULT_FIRE_RETENTION_SECONDS
    const capabilitiesVersion = (snapshot.ext as { adwire: { capabilities_version: string } }).adwire
      .capabilities_version
    let periodic: Loops | undefined
    let closing: Promise<void> | undefined
    const runtime: SellerRuntime = {
      publicUrl,
      ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
      storage,
      key,
      tokens,
      sender,
      events,
      seller,
      capabilitiesVersion,
      agent,
      log,
      http,
      fetch: (request) => http.fetch(request),
      async sweep() {
        // Expired idempotency records, then the webhook bookkeeping nothing reads any more (events/retention.ts).
        await storage.sweep(now())
        await pruneWebhookRecords(storage.records, now(), retention)
      },
      tick: () => tickBuys(seller),
      // Due reviews, stored: this instance or any other finishes each once (a lease claimed by compare-and-set).
      due: () => tickDueWork(seller),
      announce: () => announceCapabilities(storage.records, events, capabilitiesVersion),
      async start(intervals = {}) {
        if (periodic || closing) throw new Error('the seller was started or closed already')
        periodic = startLoops([], log)
        await runtime
          .announce()
          .catch((error: unknown) => log({ capabilities: 'announce failed', error: String(error) }))
        if (closing) return
        periodic = startLoops(
          [
            { name: 'sweep', everyMs: intervals.sweepMs ?? 60_000, run: () => runtime.sweep() },
            { name: 'tick', everyMs: intervals.tickMs ?? 30_000, run: () => runtime.tick() },
            { name: 'due', everyMs: intervals.dueMs ?? 1_000, run: () => runtime.due() },
          ],
          log,
        )
      },
      close() {
        closing ??= (async () => {
          await periodic?.stop()
          await scheduler?.stop()
          await Promise.allSettled([...inFlight])
          await sender.stop()
          if (owned) await storage.close()
        })()
        return closing
      },
    }
    return runtime
  } catch (error) {
    if (owned) await storage.close()
    throw error
  }
}
