/**
 * Runs crawl requests in the background, one at a time: `queued` → `running` → `completed` (valid file),
 * `invalid` (file missing or invalid) or `retrying` (transient failure, up to `max_attempts`) → `failed`.
 */
import type { RegistryDeps } from '../deps.js'

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

  async function drain(): Promise<void> {
    do {
      again = false
      for (;;) {
        if (stopped) return
        const nowIso = new Date(deps.now()).toISOString()
        const request = await deps.repository.requests.nextCrawlRequest(nowIso)
        if (!request) break
        const attempts = request.attempts + 1
        await deps.repository.requests.updateCrawlRequest(request.id, {
          status: 'running',
          attempts,
          started_at: request.started_at ?? nowIso,
          last_attempted_at: nowIso,
        })
        try {
          const { inspection, events } = await deps.crawler.crawlPublisher(
            request.domain,
            request.requested_by ?? 'crawler',
          )
          if (events.length > 0) deps.hub.notify()
          const done = new Date(deps.now()).toISOString()
          if (inspection.transient) {
            const failed = attempts >= request.max_attempts
            await deps.repository.requests.updateCrawlRequest(request.id, {
              status: failed ? 'failed' : 'retrying',
              last_error_code: 'fetch_failed',
              next_attempt_at: failed
                ? null
                : new Date(deps.now() + (options.retrySeconds ?? 60) * 1000).toISOString(),
              ...(failed ? { completed_at: done } : {}),
            })
          } else {
            await deps.repository.requests.updateCrawlRequest(request.id, {
              status: inspection.valid ? 'completed' : 'invalid',
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
          await deps.repository.requests.updateCrawlRequest(request.id, {
            status: 'failed',
            completed_at: new Date(deps.now()).toISOString(),
            last_error_code: 'internal_error',
          })
        }
      }
    } while (again && !stopped)
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
