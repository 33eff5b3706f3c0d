/**
 * Runs the registry: storage from the environment (migrations, auth tables), the demo world on an empty
 * database, the crawler on an SSRF-safe fetch, the crawl queue, the feed pruning timer and the app on
 * @hono/node-server; `close()`
 * shuts it all down in order. server.ts calls it with process.env; the tests with their own env on port 0.
 */
import type { SafeFetch } from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import { listen, type Listener } from '@adwire/service-kit'
import type { Context } from 'hono'
import { createApp } from './app.js'
import { createAuth, migrateAuthPostgres, migrateAuthSqlite } from './auth/index.js'
import { createCrawler } from './crawl/crawler.js'
import { createDiscoveryJobs } from './crawl/discovery-jobs.js'
import { createCrawlQueue } from './crawl/queue.js'
import { openRepository, type RegistryRepository } from './db/repository.js'
import type { Authenticator, RegistryDeps } from './deps.js'
import type { RegistryEnv } from './env.js'
import { createFeedHub } from './feed/hub.js'
import { CLAIM_TTL_DAYS } from './routes/hosted.js'
import { errorBody } from './routes/http.js'
import { seedDemoWorld } from './seed.js'

export { parseEnv } from './env.js'

export interface StartOverrides {
  /** The fetch the crawler uses (default: the SSRF-safe fetch configured from `env.crawl`). */
  readonly fetch?: SafeFetch
  readonly now?: () => number
  readonly log?: (entry: Record<string, unknown>) => void
  /** Default `log`; the tests use `strict`. */
  readonly validateResponses?: RegistryDeps['validateResponses']
  /** Replaces the auth module (tests of the app alone). */
  readonly auth?: Authenticator
}

export interface RunningRegistry {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  readonly repository: RegistryRepository
  readonly deps: RegistryDeps
  /** Creates an organization and its first API key (what `adwire registry admin create-org` does). */
  createOrg(name: string): Promise<{ id: string; apiKey: string }>
  /** Resolves when queued crawl requests have run (tests). */
  crawlsIdle(): Promise<void>
  /**
   * Deletes feed events older than the retention window (and expired claim tokens) now; resolves to the
   * number of events deleted. The service also runs it at start and every `FEED_PRUNE_INTERVAL_SECONDS`.
   */
  pruneFeed(): Promise<number>
  /** Whether the demo world was loaded at this start. */
  readonly seeded: boolean
  /** Stops accepting, ends feed streams, lets in-flight requests finish (up to `graceMs`), closes storage. */
  close(graceMs?: number): Promise<void>
}

/**
 * @example
 * const registry = await startRegistry(parseEnv({ PORT: '0', DATABASE_URL: 'sqlite:/tmp/registry.sqlite' }))
 * await fetch(`${registry.url}/api/brands/resolve?domain=acme-outdoor.example`)
 * await registry.close()
 */
export async function startRegistry(
  env: RegistryEnv,
  overrides: StartOverrides = {},
): Promise<RunningRegistry> {
  const { repository, connection } = await openRepository(env.database)
  let listener: Listener | undefined
  try {
    if (connection.kind === 'sqlite') migrateAuthSqlite(connection.db)
    else await migrateAuthPostgres(connection.pool, connection.schema)
    const now = overrides.now ?? Date.now
    const seeded = env.seed ? await seedDemoWorld(repository, now()) : false
    const hub = createFeedHub()
    const fetch =
      overrides.fetch ??
      createSafeFetch({
        allowHttp: env.crawl.allowPrivate,
        allowLoopback: env.crawl.allowPrivate,
        allowPrivate: env.crawl.allowPrivate,
        timeoutMs: env.crawl.timeoutMs,
        maxBytes: env.crawl.maxBytes,
        userAgent: 'adwire-registry',
      })
    const origins = env.crawl.origins
    const crawler = createCrawler(repository, {
      fetch,
      originFor: (domain) => origins[domain] ?? `https://${domain}`,
      maxBytes: env.crawl.maxBytes,
      now,
      allowHttp: env.crawl.allowPrivate,
    })
    listener = await listen({
      port: env.port,
      host: env.host,
      limits: env.http,
      starting: () => Response.json(errorBody('starting', 'the registry is starting'), { status: 503 }),
    })
    const url = listener.url
    const auth = createAuth(
      connection.kind === 'sqlite'
        ? { kind: 'sqlite', db: connection.db }
        : { kind: 'postgres', pool: connection.pool, schema: connection.schema },
      { issuer: env.publicUrl ?? url, now },
    )
    const deps: RegistryDeps = {
      repository,
      crawler,
      auth: overrides.auth ?? auth,
      hub,
      now,
      log:
        overrides.log ??
        ((entry) => process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`)),
      validateResponses: overrides.validateResponses ?? 'log',
      feedRetentionDays: env.feedRetentionDays,
      memberTier: env.memberTier,
      publicUrl: (c: Context) => env.publicUrl ?? new URL(c.req.url).origin,
      ...(env.adminApiKey ? { adminApiKey: env.adminApiKey } : {}),
    }
    const queue = createCrawlQueue(deps)
    const discoveryJobs = createDiscoveryJobs(deps, queue)
    const app = createApp(deps, {
      queue,
      authRoutes: auth.routes,
      rateLimits: env.rateLimits,
      discoveryJobs,
    })
    listener.handle(app.fetch)
    queue.kick()
    const listening = listener
    let closing: Promise<void> | undefined
    const pruneFeed = () => pruneExpired(deps)
    let pruning: Promise<unknown> = Promise.resolve()
    const prune = () => {
      pruning = pruneFeed().catch((error: unknown) =>
        deps.log({ feed_prune: 'failed', error: String(error) }),
      )
    }
    prune()
    const pruneTimer =
      env.feedPruneIntervalSeconds > 0 ? setInterval(prune, env.feedPruneIntervalSeconds * 1000) : undefined
    pruneTimer?.unref()
    return {
      port: listening.port,
      url,
      listener: listening,
      repository,
      deps,
      seeded,
      createOrg: (name) => auth.createOrg(name),
      crawlsIdle: async () => {
        await discoveryJobs.idle()
        await queue.idle()
      },
      pruneFeed,
      close(graceMs = 10_000) {
        closing ??= (async () => {
          const drained = listening.close(graceMs)
          clearInterval(pruneTimer)
          // Feed streams end right away: they would hold the drain open.
          hub.close()
          await discoveryJobs.stop()
          await queue.stop()
          await drained
          await pruning
          await repository.close()
        })()
        return closing
      },
    }
  } catch (error) {
    await listener?.close()
    await repository.close()
    throw error
  }
}

/** Deletes feed events past the retention window and claim tokens past their lifetime. */
async function pruneExpired(deps: RegistryDeps): Promise<number> {
  const now = deps.now()
  const deleted = await deps.repository.feed.prune(
    new Date(now - deps.feedRetentionDays * 86_400_000).toISOString(),
  )
  await deps.repository.hosting.pruneClaims(new Date(now - CLAIM_TTL_DAYS * 86_400_000).toISOString())
  if (deleted > 0) deps.log({ feed_pruned: deleted })
  return deleted
}
