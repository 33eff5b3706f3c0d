/**
 * The background work of Brand and Agent Discovery: brand.json crawls requested with
 * `POST /api/registry/brand-crawl-request` (run one per domain at a time through the SSRF-safe crawler, the
 * outcome recorded on the request row), and the manager re-validation queue, drained at a bounded rate — at
 * most `managerBatch` publishers (default 50) per `managerTickMs` (default 5 minutes) become durable crawl
 * requests of the crawl queue.
 */
import { crawlBrand } from '../domain/brand-service.js'
import { newId } from '../domain/ids.js'
import type { RegistryDeps } from '../deps.js'
import type { CrawlQueue } from './queue.js'
import { every } from '@adwire/service-kit'

export interface DiscoveryJobs {
  /** Crawls `domain`'s brand.json in the background (the request row is already recorded). */
  crawlBrand(domain: string): void
  /** Drains one batch of the manager re-validation queue now, unless a batch ran within the tick. */
  drainManagerQueue(): Promise<number>
  /** Resolves when no brand crawl or drain is running (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

export interface DiscoveryJobOptions {
  readonly managerBatch?: number
  readonly managerTickMs?: number
}

/** Default: ≈50 publishers per 5-minute tick, as the document describes. */
export const MANAGER_BATCH = 50
export const MANAGER_TICK_MS = 5 * 60_000

/** Creates the jobs; the manager drain ticks until stopped. */
export function createDiscoveryJobs(
  deps: RegistryDeps,
  queue: CrawlQueue,
  options: DiscoveryJobOptions = {},
): DiscoveryJobs {
  const batch = options.managerBatch ?? MANAGER_BATCH
  const tickMs = options.managerTickMs ?? MANAGER_TICK_MS
  const running = new Set<Promise<unknown>>()
  let stopped = false
  let lastDrain = Number.NEGATIVE_INFINITY
  let draining: Promise<number> | undefined

  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work)
    void work.finally(() => running.delete(work)).catch(() => undefined)
    return work
  }

  async function brandCrawl(domain: string): Promise<void> {
    const { repository, crawler } = deps
    await repository.discovery.finishOutbound(
      'brand_crawl',
      domain,
      'running',
      new Date(deps.now()).toISOString(),
    )
    try {
      const result = await crawlBrand(repository, crawler, domain, deps.now())
      const error = result.found ? undefined : (result.live?.errors[0]?.message ?? 'no brand.json found')
      await repository.discovery.finishOutbound(
        'brand_crawl',
        domain,
        result.found ? 'completed' : 'failed',
        new Date(deps.now()).toISOString(),
        error,
      )
    } catch (error) {
      deps.log({ brand_crawl: domain, error: String(error) })
      await repository.discovery
        .finishOutbound('brand_crawl', domain, 'failed', new Date(deps.now()).toISOString(), 'internal_error')
        .catch(() => undefined)
    }
  }

  async function drain(): Promise<number> {
    const now = deps.now()
    if (stopped || now - lastDrain < tickMs) return 0
    lastDrain = now
    const rows = await deps.repository.discovery.takeManagerRevalidations(batch)
    const at = new Date(now).toISOString()
    for (const row of rows) {
      await deps.repository.requests.createCrawlRequest({
        id: newId(),
        domain: row.publisher_domain,
        status: 'queued',
        attempts: 0,
        max_attempts: 3,
        requested_by: row.requested_by ?? `manager:${row.manager_domain}`,
        requested_at: at,
        started_at: null,
        last_attempted_at: null,
        completed_at: null,
        next_attempt_at: null,
        last_error_code: null,
      })
    }
    if (rows.length > 0) queue.kick()
    return rows.length
  }

  const drainManagerQueue = (): Promise<number> => {
    draining ??= track(
      drain()
        .catch((error: unknown) => {
          deps.log({ manager_revalidation: 'failed', error: String(error) })
          return 0
        })
        .finally(() => {
          draining = undefined
        }),
    )
    return draining
  }

  const timer = every(drainManagerQueue, tickMs)

  return {
    crawlBrand(domain) {
      if (stopped) return
      void track(brandCrawl(domain))
    },
    drainManagerQueue,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running])
    },
    async stop() {
      stopped = true
      await timer.stop()
      await Promise.allSettled([...running])
    },
  }
}
