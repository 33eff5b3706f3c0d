/**
 * The real dependencies of the creative agent, built from its environment: the stores on SQLite or PostgreSQL,
 * the signing key, the bearer tokens, the webhook sender on the durable outbox, the preview store and the
 * task server.
 */
import { createAgentServer, webhookFetch, type AgentServer } from '@adwire/agent-server'
import { createWebhookSender, type SenderLogEntry, type WebhookSender } from '@adwire/webhooks'
import { capabilities } from './capabilities.js'
import { standardCatalog, type FormatCatalog } from '@adwire/formats'
import { supportedFormats } from './creative/canonical.js'
import type { CreativeAgentRef } from './creative/context.js'
import type { CreativeAgentEnv } from './env.js'
import { resolveSigningKeys, type SigningKeys } from './keys.js'
import { createServicePreviewStore, type ServicePreviewStore } from './previews.js'
import { openStorage, type Storage } from './storage.js'
import { creativeTasks, type Log } from './tasks.js'
import { resolveTokens, type ResolvedTokens } from './tokens.js'
import type { TargetPolicy } from '@adwire/http-signatures/node'

export type { Log } from './tasks.js'

/** The agent's version, reported in get_adcp_capabilities and the agent card. */
export const AGENT_VERSION = '0.1.0'
/** How long one build holds its idempotency key before a duplicate may take over, seconds. */
export const IN_FLIGHT_MAX_SECONDS = 300

/** What {@link createApp} needs; nothing in it reads the environment. */
export interface CreativeAgentDeps {
  /** The public base URL, no trailing slash. */
  readonly publicUrl: string
  readonly storage: Storage
  /** The webhook-signing and request-signing keys, and the JWKS publishing both. */
  readonly keys: SigningKeys
  readonly tokens: ResolvedTokens
  readonly previews: ServicePreviewStore
  readonly sender: WebhookSender
  readonly agent: AgentServer
  readonly log: Log
  /** The clock (Date) used to serve previews. */
  readonly clock: () => Date
}

/** Replacements for tests and embedding. */
export interface DepsOverrides {
  readonly log?: Log
  /** Unix seconds, for the task server, the sender and the sweeper. */
  readonly now?: () => number
  /** Extra formats or another catalog (its agent_url must be the public URL). */
  readonly catalog?: (standard: FormatCatalog) => FormatCatalog
  readonly creativeAgents?: readonly CreativeAgentRef[]
  /** How often an idle sender looks for due webhooks, milliseconds. Default 500. */
  readonly senderPollMs?: number
  /**
   * Webhook deliveries in flight at once (the sender's default when unset). Deliveries of one task may then
   * arrive out of order, which receivers handle (a non-terminal after the terminal is stale); 1 keeps them
   * in order.
   */
  readonly senderConcurrency?: number
  /** The fetch webhooks are delivered with. Default: {@link webhookFetch}, pinned to checked addresses. */
  readonly webhookFetch?: typeof fetch
  /** Resolves host names for the default webhook fetch (default `node:dns`). */
  readonly lookup?: TargetPolicy['lookup']
}

/** The dependencies plus what the service runs beside the app. */
export interface Runtime {
  readonly deps: CreativeAgentDeps
  /** Waits for the async builds and preview writes in flight, stops the sender, closes the database. */
  close(): Promise<void>
}

/**
 * @example
 * const runtime = await openDeps(parseEnv(), 'http://127.0.0.1:4200')
 * const app = createApp(runtime.deps)
 */
export async function openDeps(
  env: CreativeAgentEnv,
  publicUrl: string,
  overrides: DepsOverrides = {},
): Promise<Runtime> {
  const log = overrides.log ?? (() => {})
  const storage = await openStorage(env.database)
  try {
    const keys = await resolveSigningKeys(storage, env.signingKey, env.requestSigningKey)
    const key = keys.webhook
    const tokens = await resolveTokens(storage, env.tokens)
    const sender = createWebhookSender({
      outbox: storage.outbox,
      key: key.privateJwk,
      fetch:
        overrides.webhookFetch ??
        webhookFetch({
          allowInsecure: env.allowInsecureWebhookUrls,
          ...(overrides.lookup ? { lookup: overrides.lookup } : {}),
        }),
      pollIntervalMs: overrides.senderPollMs ?? 500,
      ...(overrides.senderConcurrency ? { concurrency: overrides.senderConcurrency } : {}),
      ...(overrides.now ? { now: overrides.now } : {}),
      log: (entry: SenderLogEntry) => {
        if (entry.event !== 'enqueued' && entry.event !== 'delivered') log({ webhook: entry })
      },
    })
    const previews = createServicePreviewStore({ persistence: storage, log })
    const standard = standardCatalog(publicUrl)
    const catalog = overrides.catalog ? overrides.catalog(standard) : standard
    const inFlight = new Set<Promise<void>>()
    const tasks = creativeTasks({
      publicUrl,
      catalog,
      previews,
      ...(overrides.creativeAgents
        ? { creativeAgents: overrides.creativeAgents }
        : env.creativeAgents.length > 0
          ? { creativeAgents: env.creativeAgents }
          : {}),
      capabilities: {
        status: 'completed',
        ...capabilities({
          publicUrl,
          signingAlgorithm: key.algorithm,
          replayTtlSeconds: env.idempotencyTtlSeconds,
          inFlightMaxSeconds: IN_FLIGHT_MAX_SECONDS,
          version: AGENT_VERSION,
          supportedFormats: supportedFormats(catalog),
        }),
      },
      allowInsecureWebhookUrls: env.allowInsecureWebhookUrls,
      background(work) {
        // After the current call has answered (the submitted response goes first).
        const running: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
          .then(work)
          .catch((error: unknown) => log({ background: 'failed', error: String(error) }))
          .finally(() => inFlight.delete(running))
        inFlight.add(running)
      },
      log,
    })
    const agent = createAgentServer({
      tasks,
      name: 'adwire-creative-agent',
      version: AGENT_VERSION,
      description:
        'AdCP 3.1 creative agent: a catalog of standard formats, list_creative_formats, build_creative and preview_creative',
      url: publicUrl,
      auth: {
        tokens: tokens.lookup,
        // A wrong bearer is refused on public tasks too (401 AUTH_INVALID), never served as anonymous.
        refuseInvalidOnPublicTasks: true,
      },
      idempotency: {
        store: storage.claims,
        replayTtlSeconds: env.idempotencyTtlSeconds,
        leaseSeconds: IN_FLIGHT_MAX_SECONDS,
      },
      sender,
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
    const clock = overrides.now ? () => new Date(overrides.now!() * 1000) : () => new Date()
    sender.start()
    let closing: Promise<void> | undefined
    return {
      deps: { publicUrl, storage, keys, tokens, previews, sender, agent, log, clock },
      close() {
        closing ??= (async () => {
          await Promise.allSettled([...inFlight])
          await previews.idle()
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
