/**
 * The app's periodic scheduler of delivery reports: every `intervalMs` it asks the events for the reports due
 * on the injected clock ({@link WebhookEvents.tick}); one tick at a time, never overlapping; `stop()` waits
 * for the tick under way.
 */
import { every } from '@adwire/agent-server/host'
import type { WebhookEvents } from './webhook-events.js'

export interface ReportScheduler {
  stop(): Promise<void>
}

export function startReportScheduler(
  events: Pick<WebhookEvents, 'tick'>,
  intervalMs: number,
  log: (entry: Record<string, unknown>) => void,
): ReportScheduler {
  return every(
    () => events.tick(),
    intervalMs,
    (error) => log({ scheduler: 'failed', error: String(error) }),
  )
}
