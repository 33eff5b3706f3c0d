/**
 * The app's periodic scheduler of delivery reports: every `intervalMs` it asks the events for the reports due
 * on the injected clock ({@link WebhookEvents.tick}); one tick at a time, never overlapping; `stop()` waits
 * for the tick under way.
 */
import type { WebhookEvents } from './webhook-events.js'

export interface ReportScheduler {
  stop(): Promise<void>
}

export function startReportScheduler(
  events: Pick<WebhookEvents, 'tick'>,
  intervalMs: number,
  log: (entry: Record<string, unknown>) => void,
): ReportScheduler {
  let running: Promise<void> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = events
      .tick()
      .then(() => undefined)
      .catch((error: unknown) => log({ scheduler: 'failed', error: String(error) }))
      .finally(() => (running = undefined))
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
