/**
 * Runs crawl requests in the background, one at a time: `queued` → `running` → `completed` (valid file),
 * `invalid` (file missing or invalid) or `retrying` (transient failure, up to `max_attempts`) → `failed`. The
 * requests are a lease queue (@adwire/sql): a claimed request is `running` under a lease this instance renews,
 * so instances sharing a database never crawl one request twice at once, and one left `running` by a stopped
 * registry runs again once its lease has expired (or fails, out of attempts).
 */
import type { Fence } from '@adwire/sql'
import { every } from '@adwire/service-kit'
import type { RegistryDeps } from '../deps.js'
import type { CrawlRequest } from '../domain/types.js'

/** How long a claimed request belongs to this instance without a renewal, ms. */
const LEASE_MS = 5 * 60_000

export interface CrawlQueue {
  /** Looks for work now. */
  kick(): void
  /** Resolves when the queue is idle (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

/** Creates the queue; it runs until stopped. */
export function createCrawlQueue(deps: RegistryDeps, options: { retrySeconds?: number } = {}): CrawlQueue {
  let running: Promise<void> | undefined
  let again = false
  let stopped = false

  const iso = (ms: number) => new Date(ms).toISOString()
  const requests = deps.repository.requests

  async function drain(): Promise<void> {
    do {
      again = false
      // Requests a stopped registry left running come back once their lease has expired.
      const recovered = await requests.recoverCrawlRequests(iso(deps.now()))
      if (recovered.requeued + recovered.failed > 0) deps.log({ crawl_queue: 'recovered', ...recovered })
      for (;;) {
        if (stopped) return
        const claimed = await requests.claimCrawlRequest(iso(deps.now()), iso(deps.now() + LEASE_MS))
        if (!claimed) break
        await crawl(claimed.request, claimed.fence)
      }
    } while (again && !stopped)
  }

  /** One claimed request, its lease renewed while the crawl runs. */
  async function crawl(request: CrawlRequest, fence: Fence): Promise<void> {
    const renewing = every(
      () => requests.renewCrawlRequest(request.id, fence, iso(deps.now() + LEASE_MS)),
      LEASE_MS / 3,
    )
    try {
      const { inspection, events } = await deps.crawler.crawlPublisher(
        request.domain,
        request.requested_by ?? 'crawler',
      )
      if (events.length > 0) deps.hub.notify()
      const done = iso(deps.now())
      if (inspection.transient) {
        if (request.attempts >= request.max_attempts)
          await requests.finishCrawlRequest(request.id, fence, 'failed', {
            last_error_code: 'fetch_failed',
            next_attempt_at: null,
            completed_at: done,
          })
        else
          await requests.retryCrawlRequest(
            request.id,
            fence,
            iso(deps.now() + (options.retrySeconds ?? 60) * 1000),
            'fetch_failed',
          )
      } else {
        await requests.finishCrawlRequest(request.id, fence, inspection.valid ? 'completed' : 'invalid', {
          completed_at: done,
          next_attempt_at: null,
          last_error_code: inspection.valid
            ? null
            : inspection.status_code && inspection.status_code !== 200
              ? `http_${inspection.status_code}`
              : 'adagents_invalid',
        })
      }
    } catch (error) {
      deps.log({ crawl: request.domain, error: String(error) })
      await requests.finishCrawlRequest(request.id, fence, 'failed', {
        completed_at: iso(deps.now()),
        last_error_code: 'internal_error',
      })
    } finally {
      await renewing.stop()
    }
  }

  return {
    kick() {
      if (running) {
        again = true
        return
      }
      running = drain()
        .catch((error: unknown) => deps.log({ crawl_queue: 'failed', error: String(error) }))
        .finally(() => {
          running = undefined
        })
    },
    async idle() {
      while (running) await running
    },
    async stop() {
      stopped = true
      await running
    },
  }
}
