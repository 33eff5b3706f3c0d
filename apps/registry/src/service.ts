/**
 * Runs the registry: storage from the environment (migrations, auth tables), the demo world on an empty
 * database, the crawler on an SSRF-safe fetch, the crawl queue, the feed pruning timer and the app on
 * @hono/node-server; `close()`
 * shuts it all down in order. server.ts calls it with process.env; the tests with their own env on port 0.
 */
import type { SafeFetch } from '@adwire/http-signatures'
import { createPinnedFetch, createSafeFetch } from '@adwire/http-signatures/node'
import { every, listen, serviceLog, type Listener } from '@adwire/service-kit'
import type { Context } from 'hono'
import { createApp } from './app.js'
import { createAgentProber } from './compliance/probe-agents.js'
import { createAgentFetch } from './compliance/probe.js'
import { workerRunExecutor, type WorkerRunExecutor } from './compliance/run-executor.js'
import {
  complianceRunLauncher,
  createComplianceRuns,
  type ComplianceRuns,
  type ComplianceRunsOptions,
} from './compliance/runs.js'
import { createAuth, migrateAuthPostgres, migrateAuthSqlite } from './auth/index.js'
import type {
  AgentCredentialSource,
  ComplianceOutcomeSink,
  ComplianceRunLauncher,
} from './compliance/contract.js'
import { agentCredentialStore, createSecretBox } from './compliance/credentials.js'
import { createMonitoringScheduler, type MonitoringScheduler } from './compliance/monitoring.js'
import { complianceStatusStore } from './compliance/status-store.js'
import { createComplianceStatus } from './compliance/status.js'
import { createCrawler } from './crawl/crawler.js'
import { createDiscoveryJobs } from './crawl/discovery-jobs.js'
import { createCrawlQueue } from './crawl/queue.js'
import { openRepository, type RegistryRepository } from './db/repository.js'
import type { Authenticator, RegistryDeps } from './deps.js'
import type { RegistryEnv } from './env.js'
import { hasApiAccess } from './domain/membership.js'
import { createFeedHub } from './feed/hub.js'
import { CLAIM_TTL_DAYS } from './routes/hosted.js'
import { errorBody } from './routes/http.js'
import { seedDemoWorld } from './seed.js'
import { controllerCredentials } from './auth/authorize.js'

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
  /**
   * Builds the compliance run launcher from the status side's outcome sink and credential source; without one
   * there is no monitoring and `refresh` runs nothing. (Tests pass a test launcher here.)
   */
  readonly complianceLauncher?: (parts: {
    readonly outcomes: ComplianceOutcomeSink
    readonly credentials: AgentCredentialSource
  }) => ComplianceRunLauncher
  /** The fetch of refresh probes and token-endpoint tests (default: pinned, SSRF-safe per `env.crawl`). */
  readonly complianceFetch?: typeof globalThis.fetch
  /**
   * Replaces what the compliance runs report to and read credentials from (default: the status side's outcome
   * sink and sealed credential store), for tests that watch the runs alone.
   */
  readonly compliance?: {
    readonly outcomes?: ComplianceOutcomeSink
    readonly credentials?: AgentCredentialSource
  }
  /** Tuning of the compliance runs (lease, timeouts, concurrency), for tests. */
  readonly complianceRuns?: Pick<
    ComplianceRunsOptions,
    'leaseMs' | 'maxAttempts' | 'concurrency' | 'stepTimeoutMs' | 'runTimeoutMs'
  >
  /** The reference agent of compareStoryboard (default: `env.agents.referenceUrl`). */
  readonly referenceAgent?: { readonly url: string; readonly name: string }
}

export interface RunningRegistry {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  readonly repository: RegistryRepository
  readonly deps: RegistryDeps
  /** The compliance runs (also the status side's `ComplianceRunLauncher`). */
  readonly complianceRuns: ComplianceRuns
  /** The worker thread the compliance runs are performed on (off the request event loop). */
  readonly complianceWorker: WorkerRunExecutor
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
  /** The compliance monitoring scheduler (absent without a launcher). */
  readonly monitoring?: MonitoringScheduler
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
  let runsStarted: ComplianceRuns | undefined
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
      log: overrides.log ?? serviceLog('registry'),
      starting: () => Response.json(errorBody('starting', 'the registry is starting'), { status: 503 }),
    })
    const url = listener.url
    const auth = createAuth(
      connection.kind === 'sqlite'
        ? { kind: 'sqlite', db: connection.db }
        : { kind: 'postgres', pool: connection.pool, schema: connection.schema },
      { issuer: env.publicUrl ?? url, now },
    )
    const log = overrides.log ?? serviceLog('registry')
    const outcomes = createComplianceStatus(complianceStatusStore(repository.driver), {
      now,
      log,
      badgesAllowed: hasApiAccess(env.memberTier),
      allowPrivate: env.crawl.allowPrivate,
      fetch:
        overrides.complianceFetch ??
        createPinnedFetch({
          allowHttp: env.crawl.allowPrivate,
          allowLoopback: env.crawl.allowPrivate,
          allowPrivate: env.crawl.allowPrivate,
          timeoutMs: env.crawl.timeoutMs,
          maxBytes: 64 * 1024,
          userAgent: 'adwire-registry-compliance',
        }),
    })
    const credentials = agentCredentialStore(repository.driver, createSecretBox(env.credentialKeys))
    if (!credentials.available) log({ agent_credentials: 'disabled: AGENT_CREDENTIALS_KEY is not set' })
    const agentAccess = {
      allowPrivate: env.agents.allowPrivate,
      timeoutMs: env.agents.timeoutMs,
      maxBytes: 4 * 1024 * 1024,
    }
    const agentFetch = createAgentFetch(agentAccess)
    const reference =
      overrides.referenceAgent ??
      (env.agents.referenceUrl ? { url: env.agents.referenceUrl, name: 'Reference agent' } : undefined)
    // Runs (manual ones and monitoring heartbeats alike) are performed on a worker thread: this event loop only
    // claims them, renews their lease and stores what the worker found.
    const complianceWorker = workerRunExecutor(
      {
        agents: agentAccess,
        stepTimeoutMs: overrides.complianceRuns?.stepTimeoutMs ?? 30_000,
        runTimeoutMs: overrides.complianceRuns?.runTimeoutMs ?? 600_000,
      },
      { log },
    )
    // The runs report each finished storyboard to the status side and present the sealed credentials; the
    // status side's monitoring and refresh start runs through the runs' launcher.
    // Runs and probes present the run's organization's own credential, else the agent's controller's.
    const runCredentials = overrides.compliance?.credentials ?? controllerCredentials(repository, credentials)
    const complianceRuns = createComplianceRuns({
      driver: repository.driver,
      fetch: agentFetch,
      executor: complianceWorker,
      now,
      log,
      outcomes: overrides.compliance?.outcomes ?? outcomes,
      credentials: runCredentials,
      ...(reference ? { reference } : {}),
      ...overrides.complianceRuns,
    })
    runsStarted = complianceRuns
    const launcher =
      overrides.complianceLauncher?.({ outcomes, credentials }) ?? complianceRunLauncher(complianceRuns)
    const deps: RegistryDeps = {
      repository,
      crawler,
      auth: overrides.auth ?? auth,
      hub,
      now,
      log,
      validateResponses: overrides.validateResponses ?? 'log',
      feedRetentionDays: env.feedRetentionDays,
      memberTier: env.memberTier,
      publicUrl: (c: Context) => env.publicUrl ?? new URL(c.req.url).origin,
      compliance: { outcomes, credentials, launcher },
      ...(env.adminApiKey ? { adminApiKey: env.adminApiKey } : {}),
    }
    const queue = createCrawlQueue(deps)
    const discoveryJobs = createDiscoveryJobs(deps, queue)
    const app = createApp(deps, {
      queue,
      authRoutes: auth.routes,
      rateLimits: env.rateLimits,
      compliance: {
        runs: complianceRuns,
        prober: createAgentProber({
          fetch: agentFetch,
          deadlineMs: env.agents.timeoutMs * 2,
          credentials: runCredentials,
        }),
        fetch: agentFetch,
        ...(reference ? { reference } : {}),
        publicKeys: () => auth.publicKeys(),
        syncWaitMs: overrides.complianceRuns?.runTimeoutMs ?? 600_000,
        probeDeadlineMs: env.agents.timeoutMs * 2,
      },
      discoveryJobs,
    })
    listener.handle(app.fetch)
    queue.kick()
    await complianceRuns.start()
    const monitoring = launcher
      ? createMonitoringScheduler({
          status: outcomes,
          launcher,
          now,
          log,
          pollMs: env.monitoringPollSeconds * 1000,
        })
      : undefined
    monitoring?.start()
    const listening = listener
    let closing: Promise<void> | undefined
    const pruneFeed = () => pruneExpired(deps)
    const pruneFailed = (error: unknown) => deps.log({ feed_prune: 'failed', error: String(error) })
    const firstPrune = pruneFeed().catch(pruneFailed)
    const pruning = every(pruneFeed, env.feedPruneIntervalSeconds * 1000, pruneFailed)
    return {
      port: listening.port,
      url,
      listener: listening,
      repository,
      deps,
      complianceRuns,
      complianceWorker,
      seeded,
      ...(monitoring ? { monitoring } : {}),
      createOrg: (name) => auth.createOrg(name),
      crawlsIdle: async () => {
        await discoveryJobs.idle()
        await queue.idle()
      },
      pruneFeed,
      close(graceMs = 10_000) {
        closing ??= (async () => {
          const drained = listening.close(graceMs)
          const pruned = pruning.stop()
          await monitoring?.stop()
          // Feed streams end right away: they would hold the drain open.
          hub.close()
          await discoveryJobs.stop()
          await queue.stop()
          // Runs in flight go back to the queue: the next start runs them again.
          await complianceRuns.close()
          await drained
          await pruned
          await firstPrune
          await repository.close()
        })()
        return closing
      },
    }
  } catch (error) {
    // A start that failed after the runs were created stops their worker thread too.
    await runsStarted?.close()
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
